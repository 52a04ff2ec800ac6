@_spi(Backend) import Coffer

extension BackendRegistry {
  /// Registers the `plist:` scheme: `plist:///path/store.plist`, or a relative `plist:store.plist`,
  /// with options `format=binary|xml` and `persist=immediate|manual|every:N|interval:SECONDS`.
  public mutating func registerPlist() {
    register(
      Entry(
        scheme: "plist",
        forms: [
          "plist:///path/store.plist?format=binary|xml&persist=immediate|manual|every:N|interval:SECONDS"
        ],
        open: { url, logger in
          try PlistBackend(
            path: try PlistBackend.path(from: url), configuration: try PlistBackend.configuration(from: url),
            logger: logger)
        },
        scratchURL: { base, directory, name in
          StoreURL(scheme: "plist", path: directory + "/" + name + ".plist", options: base.options)
        }))
  }
}

extension PlistBackend {
  /// The file path a `plist:` URL names.
  static func path(from url: StoreURL) throws -> String {
    let path = try url.localPath(
      "plist stores are files: plist:///absolute/path.plist or plist:relative.plist")
    guard !path.isEmpty, !path.hasSuffix("/") else {
      throw CofferError(
        .invalidURL, "'\(url)' names no file. Write plist:///path/store.plist or plist:store.plist.",
        store: url.description)
    }
    return path
  }

  /// The configuration a `plist:` URL's options describe.
  static func configuration(from url: StoreURL) throws -> Configuration {
    try url.checkOptions(allowed: ["format", "persist"])
    var configuration = Configuration()
    if let text = url.option("format") {
      guard let format = Format(rawValue: text.lowercased()) else {
        throw CofferError(
          .invalidURL, "'\(url)': format must be binary or xml, not '\(text)'.", store: url.description)
      }
      configuration.format = format
    }
    if let text = url.option("persist") {
      guard let persistence = Persistence(text) else {
        throw CofferError(
          .invalidURL,
          "'\(url)': persist must be immediate, manual, every:N (N ≥ 1) or interval:SECONDS, not '\(text)'.",
          store: url.description)
      }
      configuration.persistence = persistence
    }
    return configuration
  }
}

extension PlistBackend.Persistence {
  /// Parses `immediate`, `manual`, `every:N` or `interval:SECONDS`.
  init?(_ text: String) {
    let parts = text.lowercased().split(separator: ":", maxSplits: 1).map(String.init)
    switch (parts.first, parts.count) {
    case ("immediate", 1): self = .immediate
    case ("manual", 1): self = .manual
    case ("every", 2):
      guard let count = Int(parts[1]), count >= 1 else { return nil }
      self = .everyChanges(count)
    case ("interval", 2):
      guard let seconds = Double(parts[1]), seconds.isFinite, seconds > 0 else { return nil }
      self = .interval(.milliseconds(Int64(seconds * 1000)))
    default: return nil
    }
  }
}
