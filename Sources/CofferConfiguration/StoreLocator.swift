@_spi(Backend) import Coffer
import Configuration
import Foundation

/// Decides which store a program opens, from the places a person can name one.
///
/// The first of these that names a store wins:
///
/// 1. the `explicit` URL passed to ``resolve(explicit:fallback:)`` (a `--store` option);
/// 2. the environment variable `COFFER_STORE`;
/// 3. the key `coffer.store` of a configuration file: the `configFile` passed to
///    ``init(environment:configFile:)``, or else the file the environment variable
///    `COFFER_CONFIG` names. JSON (`.json`) and YAML (`.yaml`, `.yml`) files are read:
///    `{"coffer": {"store": "sqlite:///var/app/db.sqlite"}}`;
/// 4. the `fallback` URL, the program's default.
///
/// An empty or blank environment variable or file value counts as not set. Later places are
/// read only when earlier ones name nothing, so a broken configuration file does not matter
/// while `COFFER_STORE` is set. The chosen URL is checked with ``Coffer/StoreURL``; which
/// backends exist is decided when the store is opened.
///
/// ```swift
/// let locator = StoreLocator()  // the process environment
/// let (url, source) = try await locator.resolve(explicit: options.store, fallback: "memory:")
/// ```
///
/// Programs that already read their settings with swift-configuration can pass their own
/// reader with ``init(reader:name:)``.
public struct StoreLocator: Sendable {
  /// The environment variable holding a store URL: `COFFER_STORE`.
  public static let storeVariable = "COFFER_STORE"
  /// The environment variable holding a configuration file's path: `COFFER_CONFIG`.
  public static let configFileVariable = "COFFER_CONFIG"
  /// The configuration key holding a store URL: `coffer.store`. In the environment it is
  /// spelled `COFFER_STORE`.
  public static let storeKey = "coffer.store"
  /// The configuration key holding a configuration file's path, spelled `COFFER_CONFIG` in
  /// the environment.
  static let configFileKey = "coffer.config"

  enum Settings: Sendable {
    /// The environment (through swift-configuration's key mapping), then a file.
    case layered(environment: ConfigReader, configFile: String?)
    /// One reader the program built, and the name to show for it.
    case reader(ConfigReader, name: String)
  }

  let settings: Settings

  /// A locator reading an environment and, optionally, a configuration file.
  ///
  /// - Parameters:
  ///   - environment: The environment variables to read `COFFER_STORE` and `COFFER_CONFIG`
  ///     from; the process environment unless given. Tests pass a dictionary.
  ///   - configFile: The path of a JSON or YAML configuration file, chosen by its extension.
  ///     When `nil` (or empty), the path in `COFFER_CONFIG` is used, if any. The file is read
  ///     only if neither an explicit URL nor `COFFER_STORE` names a store.
  public init(
    environment: [String: String] = ProcessInfo.processInfo.environment, configFile: String? = nil
  ) {
    let provider = EnvironmentVariablesProvider(environmentVariables: environment)
    settings = .layered(
      environment: ConfigReader(provider: provider), configFile: configFile.flatMap(Self.nonBlank))
  }

  /// A locator reading `coffer.store` from a swift-configuration reader the program already
  /// uses, between the explicit URL and the fallback.
  ///
  /// The reader decides where `coffer.store` comes from: its environment provider spells the
  /// key `COFFER_STORE`, its JSON or YAML file providers read `{"coffer": {"store": …}}`.
  /// A value found there is reported as ``StoreURLSource/configFile(_:)`` with `name`.
  ///
  /// - Parameters:
  ///   - reader: The reader to ask for `coffer.store`.
  ///   - name: What to call the reader in ``StoreURLSource`` and messages; by default the
  ///     reader's description, which lists its providers.
  public init(reader: ConfigReader, name: String? = nil) {
    settings = .reader(reader, name: name ?? reader.description)
  }

  /// Chooses the store URL: `explicit`, else `COFFER_STORE`, else `coffer.store` in the
  /// configuration file, else `fallback`.
  ///
  /// - Parameters:
  ///   - explicit: A URL the caller was given directly (a `--store` option), or `nil`. An empty
  ///     string here is an error, not "unset": the person typed it.
  ///   - fallback: The URL to use when nothing else names a store.
  /// - Returns: The chosen URL, trimmed of surrounding white space, and where it came from.
  /// - Throws: ``Coffer/CofferError/Code/invalidURL`` when the chosen URL is malformed, with a
  ///   message saying where it came from; ``Coffer/CofferError/Code/invalidConfiguration`` when
  ///   the configuration file is missing, unreadable or malformed, or its `coffer.store` is not
  ///   a string.
  public func resolve(explicit: String?, fallback: String) async throws -> (
    url: String, source: StoreURLSource
  ) {
    if let explicit { return try Self.checked(explicit, from: .explicit) }
    if let (text, source) = try await configuredURL() { return try Self.checked(text, from: source) }
    return try Self.checked(fallback, from: .fallback)
  }

  /// The URL the environment or configuration names, or `nil`.
  private func configuredURL() async throws -> (String, StoreURLSource)? {
    switch settings {
    case .layered(let environment, let configFile):
      if let text = environment.string(forKey: ConfigKey(Self.storeKey)).flatMap(Self.nonBlank) {
        return (text, .environment)
      }
      let namedPath = environment.string(forKey: ConfigKey(Self.configFileKey)).flatMap(Self.nonBlank)
      guard let path = configFile ?? namedPath else { return nil }
      let origin =
        configFile == nil ? "named by \(Self.configFileVariable)" : "given as the configuration file"
      let file = try await ConfigFile(path: path, origin: origin)
      return try await file.storeURL().map { ($0, .configFile(path)) }
    case .reader(let reader, let name):
      let value: String?
      do {
        value = try await reader.fetchString(forKey: ConfigKey(Self.storeKey))
      } catch {
        throw CofferError(
          .invalidConfiguration,
          "Could not read \(Self.storeKey) from \(name) as a string: set it to a store URL such as "
            + "sqlite:///path/db.sqlite.",
          underlying: error)
      }
      return value.flatMap(Self.nonBlank).map { ($0, .configFile(name)) }
    }
  }

  /// The URL, trimmed, after checking that it parses; a parse error says where the URL came from.
  static func checked(_ text: String, from source: StoreURLSource) throws -> (
    url: String, source: StoreURLSource
  ) {
    do {
      _ = try StoreURL(text)
    } catch var error as CofferError {
      error.message += " " + source.advice
      throw error
    }
    return (text.trimmingCharacters(in: .whitespacesAndNewlines), source)
  }

  /// The text, or `nil` when it is empty or only white space.
  static func nonBlank(_ text: String) -> String? {
    text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty ? nil : text
  }
}
