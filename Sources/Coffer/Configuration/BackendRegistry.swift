import Logging

/// The backends a program can open by URL, by scheme.
///
/// A registry is a value that you build and pass; there is no hidden global one. Each backend
/// module adds its scheme with a `register…()` method (`registry.registerMemory()`), and the
/// `CofferStores` product offers `BackendRegistry.builtIn` with every backend in the package.
///
/// ```swift
/// var registry = BackendRegistry()
/// registry.registerMemory()
/// let store = try await Store.open(url: "memory:", registry: registry)
/// ```
public struct BackendRegistry: Sendable {
  /// How to open stores of one scheme.
  @_spi(Backend) public struct Entry: Sendable {
    /// The URL scheme, lowercased: `"sqlite"`.
    public var scheme: String
    /// The URL forms the backend accepts, for messages and `--help`: `"sqlite:///path/db.sqlite"`.
    public var forms: [String]
    /// Opens (creating if needed) the store a URL names, logging to the logger given.
    public var open: @Sendable (StoreURL, Logger) async throws -> any StorageBackend
    /// A URL for a new, empty store of this kind derived from `base` (keeping its options), with
    /// files placed under `directory` and named after `name`. The conformance suite and tests
    /// use it to make scratch stores.
    public var scratchURL: @Sendable (_ base: StoreURL, _ directory: String, _ name: String) -> StoreURL
    /// Forgets a scratch store made from ``scratchURL`` once it is closed, for stores that live
    /// outside the scratch directory (named in-memory stores, schemas on a database server). `nil` when removing the
    /// directory is enough.
    public var removeScratch: (@Sendable (StoreURL) async -> Void)?

    /// An entry for a backend that logs: `open` gets the logger the store was opened with
    /// (one that discards everything when none was given).
    public init(
      scheme: String, forms: [String],
      open: @escaping @Sendable (StoreURL, Logger) async throws -> any StorageBackend,
      scratchURL: @escaping @Sendable (_ base: StoreURL, _ directory: String, _ name: String) -> StoreURL,
      removeScratch: (@Sendable (StoreURL) async -> Void)? = nil
    ) {
      self.scheme = scheme.lowercased()
      self.forms = forms
      self.open = open
      self.scratchURL = scratchURL
      self.removeScratch = removeScratch
    }

    /// An entry for a backend that does not log.
    public init(
      scheme: String, forms: [String],
      open: @escaping @Sendable (StoreURL) async throws -> any StorageBackend,
      scratchURL: @escaping @Sendable (_ base: StoreURL, _ directory: String, _ name: String) -> StoreURL,
      removeScratch: (@Sendable (StoreURL) async -> Void)? = nil
    ) {
      self.init(
        scheme: scheme, forms: forms, open: { url, _ in try await open(url) }, scratchURL: scratchURL,
        removeScratch: removeScratch)
    }
  }

  private var entries: [String: Entry] = [:]

  /// An empty registry.
  public init() {}

  /// Adds or replaces the entry for a scheme.
  ///
  /// Every entry takes the change feed's URL options (`changes=on`, `changeRetention=…`; see
  /// <doc:RecordingChanges>) for its backend, which never sees them.
  @_spi(Backend) public mutating func register(_ entry: Entry) {
    entries[entry.scheme] = entry.turningOnChangeFeeds()
  }

  /// The registered schemes, sorted.
  public var schemes: [String] { entries.keys.sorted() }

  /// The entry for a scheme, or `nil`.
  @_spi(Backend) public func entry(for scheme: String) -> Entry? { entries[scheme.lowercased()] }

  /// Every URL form the registered backends accept.
  @_spi(Backend) public var forms: [String] { schemes.flatMap { entries[$0]?.forms ?? [] } }

  /// The entry for a URL's scheme.
  ///
  /// - Throws: ``CofferError/Code/unknownScheme`` listing the schemes this registry supports.
  @_spi(Backend) public func entry(for url: StoreURL) throws -> Entry {
    guard let entry = entries[url.scheme] else {
      let known =
        schemes.isEmpty ? "none (register a backend first)" : schemes.map { $0 + ":" }.joined(separator: ", ")
      throw CofferError(
        .unknownScheme,
        "No backend handles '\(url.scheme):' in this build. Supported schemes: \(known). "
          + "Forms: \(forms.joined(separator: ", ")).",
        store: url.description)
    }
    return entry
  }

  /// Parses a URL and opens the store it names.
  ///
  /// - Throws: ``CofferError/Code/invalidURL`` or ``CofferError/Code/unknownScheme`` (both listing
  ///   what this build supports), or whatever the backend throws on open.
  @_spi(Backend) public func open(_ text: String, logger: Logger? = nil) async throws -> any StorageBackend {
    let url: StoreURL
    do {
      url = try StoreURL(text)
    } catch var error as CofferError {
      if !schemes.isEmpty {
        error.message += " Supported schemes: \(schemes.map { $0 + ":" }.joined(separator: ", "))."
      }
      throw error
    }
    return try await open(url, logger: logger)
  }

  /// Opens the store a parsed URL names; the backend logs to `logger` (nothing when `nil`).
  @_spi(Backend) public func open(_ url: StoreURL, logger: Logger? = nil) async throws -> any StorageBackend {
    try await entry(for: url).open(url, (logger ?? .disabled).forStore(url.description))
  }
}
