@_spi(Backend) import Coffer
import CofferServer
import CofferStores
import CofferTestSupport
import Foundation

/// Where the replicas of a sync test live: a scratch store per replica, of the backend its name
/// says, made and removed through the built-in registry (so PostgreSQL schemas are dropped and
/// named memory stores forgotten), and for `served-KIND` a store of that kind behind a
/// `CofferServer` in this process, reached through `coffer+http://`.
///
/// Backend names: `memory`, `sqlite`, `lmdb`, `plist`, `postgres`, and `served-` before any of
/// them. `postgres` needs the test server's URL.
final class ReplicaPlaces {
  /// The URL each replica opens, in the order the backends were given.
  private(set) var urls: [String] = []
  private let folder: TemporaryFolder
  private var scratch: [StoreURL] = []
  private var servers: [ServedStore] = []
  private var opened: [Store] = []

  /// Whether this build can make replicas of `backend` (PostgreSQL given `postgresURL`).
  static func available(_ backend: String, postgresURL: String?) -> Bool {
    let kind = backend.hasPrefix("served-") ? String(backend.dropFirst(7)) : backend
    if backend != kind && BackendRegistry.builtIn.entry(for: "coffer+http") == nil { return false }
    if kind == "postgres" {
      return postgresURL != nil && BackendRegistry.builtIn.entry(for: "postgres") != nil
    }
    return BackendRegistry.builtIn.entry(for: kind) != nil
  }

  /// Makes one empty store per backend (and starts the servers of served ones).
  init(_ backends: [String], postgresURL: String?, label: String) async throws {
    folder = try TemporaryFolder("sync-\(label)")
    do {
      for (index, backend) in backends.enumerated() {
        let served = backend.hasPrefix("served-")
        let url = try Self.base(served ? String(backend.dropFirst(7)) : backend, postgresURL: postgresURL)
        let entry = try BackendRegistry.builtIn.entry(for: url)
        let place = entry.scratchURL(url, folder.path, "r\(index)-\(UUID().uuidString.prefix(8))")
        scratch.append(place)
        if served {
          let server = try await ServedStore(backing: place.description)
          servers.append(server)
          urls.append(server.url)
        } else {
          urls.append(place.description)
        }
      }
    } catch {
      await remove()
      throw error
    }
  }

  /// The backing URL a backend's scratch stores derive from.
  private static func base(_ kind: String, postgresURL: String?) throws -> StoreURL {
    switch kind {
    case "memory": return try StoreURL("memory:sync")
    case "sqlite": return try StoreURL("sqlite:///sync.sqlite")
    case "lmdb": return try StoreURL("lmdb:///sync")
    case "plist": return try StoreURL("plist:///sync.plist?format=binary")
    case "postgres":
      guard let postgresURL else { throw CofferError(.invalidConfiguration, TestServers.postgresMissing) }
      return try StoreURL(postgresURL)
    default: throw CofferError(.unknownScheme, "No replica backend named '\(kind)'.")
    }
  }

  /// Runs `body` on new replicas of `backends`, and removes them afterwards, also when it throws.
  static func using<T>(
    _ backends: [String], postgresURL: String?, label: String, _ body: (ReplicaPlaces) async throws -> T
  ) async throws -> T {
    let places = try await ReplicaPlaces(backends, postgresURL: postgresURL, label: label)
    do {
      let result = try await body(places)
      await places.remove()
      return result
    } catch {
      await places.remove()
      throw error
    }
  }

  /// Opens replica `index`'s store and prepares `schemas` in it; ``remove()`` closes it.
  func open(_ index: Int, schemas: [EntitySchema]) async throws -> Store {
    let store = try await Store.open(url: urls[index], registry: .builtIn)
    opened.append(store)
    try await store.prepare(schemas: schemas)
    return store
  }

  /// Whether replica `index` loses its rows when closed (a memory store not behind a server).
  func isVolatile(_ index: Int) -> Bool { urls[index].hasPrefix("memory:") }

  /// Closes every store opened here, stops the servers, and removes every scratch store.
  func remove() async {
    for store in opened { try? await store.close() }
    opened = []
    for server in servers { await server.stop() }
    servers = []
    for url in scratch { await BackendRegistry.builtIn.entry(for: url.scheme)?.removeScratch?(url) }
    scratch = []
  }
}

/// One store behind a `CofferServer` in this process, on a free loopback port, accepting every
/// request (no tokens: loopback only).
final class ServedStore: Sendable {
  /// `coffer+http://127.0.0.1:PORT`.
  let url: String
  /// The store the server serves.
  let store: Store
  private let serving: Task<Void, any Error>

  /// Opens the store `backing` names and serves it.
  init(backing: String) async throws {
    let store = try await Store.open(url: backing, registry: .builtIn)
    let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
    let configuration = CofferServer.Configuration(host: "127.0.0.1", port: 0, maxBodyBytes: 256 << 20) {
      port in
      portSink.yield(port)
      portSink.finish()
    }
    let server = CofferServer(store: store, configuration: configuration)
    let serving = Task { try await server.run() }
    var found = 0
    for await port in ports { found = port }
    guard found > 0 else {
      serving.cancel()
      try? await store.close()
      throw CofferError(.unavailable, "The in-process server did not start listening.")
    }
    self.url = "coffer+http://127.0.0.1:\(found)"
    self.store = store
    self.serving = serving
  }

  /// Stops serving and closes the store.
  func stop() async {
    serving.cancel()
    _ = try? await serving.value
    try? await store.close()
  }
}
