@_spi(Backend) import Coffer

/// The named in-memory stores of one registry: `memory:NAME` opened twice through the same
/// namespace reaches the same data. Each ``BackendRegistry`` made with
/// ``Coffer/BackendRegistry/registerMemory(namespace:)`` has its own, so tests never share.
public final class MemoryNamespace: Sendable {
  private let stores = LockedState<[String: MemoryStorage]>([:])

  /// An empty namespace.
  public init() {}

  /// Opens `memory:` (a fresh store) or `memory:NAME` (the shared store of that name).
  @_spi(Backend) public func open(_ url: StoreURL) throws -> MemoryBackend {
    guard url.scheme == "memory" else {
      throw CofferError(.invalidURL, "'\(url)' is not a memory: URL.", store: url.description)
    }
    guard url.host == nil, url.user == nil, url.port == nil else {
      throw CofferError(
        .invalidURL, "'\(url)' names a host; in-memory stores are written memory: or memory:NAME.",
        store: url.description)
    }
    try url.checkOptions(allowed: [])
    let name = url.path
    if name.isEmpty { return MemoryBackend() }
    let storage = stores.withLock { stores in
      if let existing = stores[name] { return existing }
      let made = MemoryStorage(name: "memory:\(name)")
      stores[name] = made
      return made
    }
    return MemoryBackend(name: "memory:\(name)", storage: storage, shared: true)
  }

  /// Forgets a named store; handles still open keep working on its last data.
  public func drop(_ name: String) { _ = stores.withLock { $0.removeValue(forKey: name) } }

  /// The names of the stores in this namespace.
  public var names: [String] { stores.withLock { $0.keys.sorted() } }
}

extension BackendRegistry {
  /// Registers the `memory:` scheme, with named stores kept in `namespace`.
  public mutating func registerMemory(namespace: MemoryNamespace = MemoryNamespace()) {
    register(
      Entry(
        scheme: "memory", forms: ["memory:", "memory:NAME"],
        open: { url in try namespace.open(url) },
        scratchURL: { _, _, name in StoreURL(scheme: "memory", path: name) },
        removeScratch: { url in namespace.drop(url.path) }))
  }
}
