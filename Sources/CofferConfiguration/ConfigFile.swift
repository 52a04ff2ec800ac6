import Coffer
import Configuration
import Foundation

/// A JSON or YAML configuration file, read once, that may hold `coffer.store`.
struct ConfigFile {
  /// The file formats read, chosen by extension.
  enum Format {
    case json, yaml

    /// The format a path's extension names, or `nil`.
    init?(path: String) {
      switch (path as NSString).pathExtension.lowercased() {
      case "json": self = .json
      case "yaml", "yml": self = .yaml
      default: return nil
      }
    }

    /// An example file in this format.
    var example: String {
      switch self {
      case .json: #"{"coffer": {"store": "sqlite:///path/db.sqlite"}}"#
      case .yaml: #"coffer: {store: "sqlite:///path/db.sqlite"}"#
      }
    }

    /// A tip for the most common mistake in this format, or an empty string.
    var tip: String {
      switch self {
      case .json: ""
      case .yaml: #" Quote a URL that ends in ':', such as "memory:"."#
      }
    }

    var name: String {
      switch self {
      case .json: "JSON"
      case .yaml: "YAML"
      }
    }
  }

  let path: String
  let format: Format
  let reader: ConfigReader

  /// Reads and parses the file.
  ///
  /// - Parameters:
  ///   - path: The file's path.
  ///   - origin: How the path was chosen, for messages: `named by COFFER_CONFIG`.
  /// - Throws: ``CofferError/Code/invalidConfiguration`` when the extension is unknown or the file
  ///   is missing, not a file, unreadable or malformed.
  init(path: String, origin: String) async throws {
    guard let format = Format(path: path) else {
      throw Self.failure(
        "The configuration file '\(path)' (\(origin)) has an extension Coffer does not read: "
          + "name it .json, .yaml or .yml.",
        path: path)
    }
    try Self.checkReadable(path, origin: origin)
    // FileProvider reads its path from a reader (its `filePath` key), which spares this module
    // a dependency on swift-system for `FilePath`.
    let location = InMemoryProvider(
      name: "coffer config file", values: ["filePath": ConfigValue(.string(path), isSecret: false)])
    let provider: any ConfigProvider
    do {
      switch format {
      case .json: provider = try await FileProvider<JSONSnapshot>(config: ConfigReader(provider: location))
      case .yaml: provider = try await FileProvider<YAMLSnapshot>(config: ConfigReader(provider: location))
      }
    } catch {
      throw Self.failure(
        "The configuration file '\(path)' (\(origin)) is not valid \(format.name) with a mapping at the "
          + "top level. Fix it; for example: \(format.example).\(format.tip)",
        path: path, underlying: error)
    }
    self.path = path
    self.format = format
    self.reader = ConfigReader(provider: provider)
  }

  /// The value of `coffer.store`, or `nil` when the file does not set it (or sets it empty).
  ///
  /// - Throws: ``CofferError/Code/invalidConfiguration`` when `coffer.store` is not a string, or
  ///   `coffer` is a value rather than a mapping.
  func storeURL() async throws -> String? {
    let key = StoreLocator.storeKey
    let value: String?
    do {
      value = try await reader.fetchString(forKey: ConfigKey(key))
    } catch {
      throw Self.failure(
        "\(key) in '\(path)' is not a string. Set it to a store URL in quotes; for example: "
          + format.example,
        path: path, underlying: error)
    }
    if let value { return StoreLocator.nonBlank(value) }
    if await holdsValue(forKey: "coffer") {
      throw Self.failure(
        "coffer in '\(path)' is a single value, but Coffer reads the store URL from the key store "
          + "inside it. Write it as: \(format.example)",
        path: path)
    }
    return nil
  }

  /// Whether the file has a value (of any type) at the key, as opposed to nothing or a mapping.
  private func holdsValue(forKey key: String) async -> Bool {
    do {
      return try await reader.fetchString(forKey: ConfigKey(key)) != nil
    } catch {
      return true  // a value that is not a string, such as a list
    }
  }

  /// Fails unless the path names a readable regular file, saying which it is not.
  private static func checkReadable(_ path: String, origin: String) throws {
    let manager = FileManager.default
    #if canImport(Darwin)
      var isDirectory: ObjCBool = false
    #else
      var isDirectory = false
    #endif
    guard manager.fileExists(atPath: path, isDirectory: &isDirectory) else {
      throw failure(
        "The configuration file '\(path)' (\(origin)) does not exist. Create it, or point to another "
          + "file.",
        path: path)
    }
    guard !Self.isTrue(isDirectory) else {
      throw failure(
        "The configuration file '\(path)' (\(origin)) is a directory. Name a .json, .yaml or .yml file.",
        path: path)
    }
    guard manager.isReadableFile(atPath: path) else {
      throw failure(
        "The configuration file '\(path)' (\(origin)) cannot be read. Check its permissions.", path: path)
    }
  }

  #if canImport(Darwin)
    private static func isTrue(_ flag: ObjCBool) -> Bool { flag.boolValue }
  #else
    private static func isTrue(_ flag: Bool) -> Bool { flag }
  #endif

  private static func failure(
    _ message: String, path: String, underlying: (any Error)? = nil
  ) -> CofferError {
    CofferError(.invalidConfiguration, message, path: path, underlying: underlying)
  }
}
