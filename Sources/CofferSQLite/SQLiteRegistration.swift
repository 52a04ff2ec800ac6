@_spi(Backend) import Coffer

extension BackendRegistry {
  /// Registers the `sqlite:` scheme: `sqlite:///absolute/path/db.sqlite`, or a relative
  /// `sqlite:db.sqlite`, with options `busyTimeout=MS`, `synchronous=off|normal|full|extra`,
  /// `readers=N` and `logStatements=on|off` (see ``SQLiteBackend/Configuration``).
  public mutating func registerSQLite() {
    register(
      Entry(
        scheme: "sqlite",
        forms: [
          "sqlite:///path/db.sqlite?busyTimeout=MS&synchronous=off|normal|full|extra&readers=N"
            + "&logStatements=on|off"
        ],
        open: { url, logger in
          try SQLiteBackend(
            path: try SQLiteBackend.path(from: url),
            configuration: try SQLiteBackend.configuration(from: url),
            logger: logger)
        },
        scratchURL: { base, directory, name in
          StoreURL(scheme: "sqlite", path: directory + "/" + name + ".sqlite", options: base.options)
        }))
  }
}

extension SQLiteBackend {
  /// The file path an `sqlite:` URL names.
  static func path(from url: StoreURL) throws -> String {
    let path = try url.localPath(
      "SQLite stores are files: sqlite:///absolute/path.sqlite or sqlite:relative.sqlite")
    guard !path.isEmpty, !path.hasSuffix("/") else {
      throw CofferError(
        .invalidURL, "'\(url)' names no file. Write sqlite:///path/db.sqlite or sqlite:db.sqlite.",
        store: url.description)
    }
    return path
  }

  /// The configuration an `sqlite:` URL's options describe.
  static func configuration(from url: StoreURL) throws -> Configuration {
    try url.checkOptions(allowed: ["busyTimeout", "synchronous", "readers", "logStatements"])
    var configuration = Configuration()
    if let text = url.option("busyTimeout") {
      guard let milliseconds = Int(text), (0...3_600_000).contains(milliseconds) else {
        throw CofferError(
          .invalidURL,
          "'\(url)': busyTimeout must be a whole number of milliseconds from 0 to 3600000, not '\(text)'.",
          store: url.description)
      }
      configuration.busyTimeout = milliseconds
    }
    if let text = url.option("synchronous") {
      guard let mode = Synchronous(rawValue: text.lowercased()) else {
        throw CofferError(
          .invalidURL, "'\(url)': synchronous must be off, normal, full or extra, not '\(text)'.",
          store: url.description)
      }
      configuration.synchronous = mode
    }
    if let text = url.option("readers") {
      guard let count = Int(text), (1...64).contains(count) else {
        throw CofferError(
          .invalidURL, "'\(url)': readers must be a whole number from 1 to 64, not '\(text)'.",
          store: url.description)
      }
      configuration.readers = count
    }
    if let text = url.option("logStatements") {
      guard let on = StatementLog.switchValue(text) else {
        throw CofferError(
          .invalidURL, "'\(url)': logStatements must be on or off, not '\(text)'.", store: url.description)
      }
      configuration.logStatements = on
    }
    return configuration
  }
}
