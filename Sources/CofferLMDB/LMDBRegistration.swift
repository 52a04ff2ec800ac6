@_spi(Backend) import Coffer

extension BackendRegistry {
  /// Registers the `lmdb:` scheme: `lmdb:///path/dir`, or a relative `lmdb:dir`, with options
  /// `mapSize`, `maxMapSize` (sizes such as `64MiB`, `1GiB` or a byte count) and `maxReaders`.
  public mutating func registerLMDB() {
    register(
      Entry(
        scheme: "lmdb",
        forms: ["lmdb:///path/dir?mapSize=64MiB&maxMapSize=64GiB&maxReaders=126"],
        open: { url, logger in
          try LMDBBackend(
            path: try LMDBBackend.path(from: url), configuration: try LMDBBackend.configuration(from: url),
            name: url.description, logger: logger)
        },
        scratchURL: { base, directory, name in
          StoreURL(scheme: "lmdb", path: directory + "/" + name + ".lmdb", options: base.options)
        }))
  }
}

extension LMDBBackend {
  /// The directory an `lmdb:` URL names.
  static func path(from url: StoreURL) throws -> String {
    var path = try url.localPath("lmdb stores are directories: lmdb:///absolute/dir or lmdb:relative/dir")
    while path.count > 1, path.hasSuffix("/") { path.removeLast() }
    guard !path.isEmpty else {
      throw CofferError(
        .invalidURL, "'\(url)' names no directory. Write lmdb:///path/dir or lmdb:dir.",
        store: url.description)
    }
    return path
  }

  /// The configuration an `lmdb:` URL's options describe.
  static func configuration(from url: StoreURL) throws -> Configuration {
    try url.checkOptions(allowed: ["mapSize", "maxMapSize", "maxReaders"])
    var configuration = Configuration()
    func size(_ option: String) throws -> Int? {
      guard let text = url.option(option) else { return nil }
      guard let bytes = ByteSize.parse(text), bytes >= 64 << 10 else {
        throw CofferError(
          .invalidURL,
          "'\(url)': \(option) must be a size of at least 64KiB, such as 64MiB, 1GiB or a number of bytes, "
            + "not '\(text)'.",
          store: url.description)
      }
      return bytes
    }
    if let mapSize = try size("mapSize") {
      configuration.mapSize = mapSize
      configuration.maxMapSize = max(configuration.maxMapSize, mapSize)
    }
    if let maxMapSize = try size("maxMapSize") {
      configuration.maxMapSize = maxMapSize
      if url.option("mapSize") == nil { configuration.mapSize = min(configuration.mapSize, maxMapSize) }
    }
    guard configuration.mapSize <= configuration.maxMapSize else {
      throw CofferError(
        .invalidURL,
        "'\(url)': mapSize (\(ByteSize.format(configuration.mapSize))) is larger than maxMapSize "
          + "(\(ByteSize.format(configuration.maxMapSize))); raise maxMapSize or lower mapSize.",
        store: url.description)
    }
    if let text = url.option("maxReaders") {
      guard let readers = Int(text), (1...65_536).contains(readers) else {
        throw CofferError(
          .invalidURL, "'\(url)': maxReaders must be a whole number from 1 to 65536, not '\(text)'.",
          store: url.description)
      }
      configuration.maxReaders = readers
    }
    return configuration
  }
}
