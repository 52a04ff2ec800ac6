@_spi(Backend) import Coffer
import CofferServer
import CofferStores
import Foundation
import Logging

/// A `CofferServer` running in this test process in front of scratch stores of one backing kind
/// (`memory:`, `sqlite:`, `lmdb:`, a PostgreSQL URL): each store name in a request's path opens a
/// scratch store of that kind, made as the conformance suite makes its own, in a folder of the
/// server's that is removed when it stops.
final class ServedStores: Sendable {
  /// The backing URL, as given.
  let backing: String
  /// The port the server listens on (loopback).
  let port: Int
  /// `coffer+http://127.0.0.1:PORT`.
  var url: String { "coffer+http://127.0.0.1:\(port)" }

  private let base: StoreURL
  private let entry: BackendRegistry.Entry
  private let registry: BackendRegistry
  private let directory: String
  /// The stores opened so far, by name, with the backing URL each was opened at.
  private let stores: LockedState<[String: (store: Store, url: StoreURL)]>
  private let serving: Task<Void, any Error>

  /// Starts a server in front of stores of `backing`'s kind, on a free loopback port, accepting
  /// `tokens` (every request when `nil`).
  ///
  /// A server started again in the same `directory` finds the stores the one before left there.
  init(
    backing: String, tokens: [CofferServer.Token]? = nil, port requested: Int = 0,
    directory given: String? = nil
  ) async throws {
    let registry = BackendRegistry.makeBuiltIn()
    let base = try StoreURL(backing)
    let entry = try registry.entry(for: base)
    let directory =
      given
      ?? FileManager.default.temporaryDirectory.appendingPathComponent("coffer-served-\(UUID().uuidString)")
      .path
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let stores = LockedState<[String: (store: Store, url: StoreURL)]>([:])
    let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
    var configuration = CofferServer.Configuration(
      host: "127.0.0.1", port: requested, tokens: tokens, maxBodyBytes: 256 << 20,
      maxFilterDepth: 256)
    configuration.onListening = { port in
      portSink.yield(port)
      portSink.finish()
    }
    let server = CofferServer(
      stores: .named { name in
        if let open = stores.withLock({ $0[name] }) { return open.store }
        let folder = (directory as NSString).appendingPathComponent(name)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let url = entry.scratchURL(base, folder, name)
        let store = try await Store.open(url: url.description, registry: registry)
        stores.withLock { $0[name] = (store, url) }
        return store
      },
      configuration: configuration)
    let serving = Task { try await server.run() }
    var found: Int?
    for await port in ports { found = port }
    guard let found, found > 0 else {
      serving.cancel()
      throw CofferError(.unavailable, "The test server did not start listening.")
    }
    self.backing = backing
    self.port = found
    self.base = base
    self.entry = entry
    self.registry = registry
    self.directory = directory
    self.stores = stores
    self.serving = serving
  }

  /// Closes and removes the scratch store a `coffer+http://` scratch URL names.
  func remove(_ url: StoreURL) async {
    let name = String(url.path.split(separator: "/").last ?? "")
    guard let open = stores.withLock({ $0.removeValue(forKey: name) }) else { return }
    try? await open.store.close()
    await entry.removeScratch?(open.url)
    try? FileManager.default.removeItem(atPath: (directory as NSString).appendingPathComponent(name))
  }

  /// A registry whose `coffer+http:` entry removes scratch stores on this server.
  func clientRegistry() throws -> BackendRegistry {
    var registry = BackendRegistry.makeBuiltIn()
    guard var entry = registry.entry(for: "coffer+http") else {
      throw CofferError(.unknownScheme, "This build has no coffer+http: backend: enable the Remote trait.")
    }
    entry.removeScratch = { [self] url in await self.remove(url) }
    registry.register(entry)
    return registry
  }

  /// The folder the server keeps its stores in.
  var folder: String { directory }

  /// Stops the server and closes every store it opened; then, unless `keepingStores`, removes
  /// them.
  func stop(keepingStores: Bool = false) async {
    serving.cancel()
    _ = try? await serving.value
    let open = stores.withLock { stores in
      defer { stores = [:] }
      return Array(stores.values)
    }
    for store in open {
      try? await store.store.close()
      if !keepingStores { await entry.removeScratch?(store.url) }
    }
    if !keepingStores { try? FileManager.default.removeItem(atPath: directory) }
  }
}

/// One server per backing kind for the whole test run, started when a test first asks for it.
actor ServedStoresPool {
  static let shared = ServedStoresPool()
  private var servers: [String: Task<ServedStores, any Error>] = [:]
  /// The pool's servers' folders: they serve until the test process ends, and Swift Testing has
  /// no hook after the last test, so the folders go when the process exits.
  private static let folders = LockedState<[String]>([])
  private static let removingAtExit: Void = { atexit { ServedStoresPool.removeFolders() } }()

  func server(for backing: String) async throws -> ServedStores {
    if let server = servers[backing] { return try await server.value }
    let server = Task { try await ServedStores(backing: backing) }
    servers[backing] = server
    let started = try await server.value
    _ = Self.removingAtExit
    Self.folders.withLock { $0.append(started.folder) }
    return started
  }

  private static func removeFolders() {
    for folder in folders.withLock({ $0 }) { try? FileManager.default.removeItem(atPath: folder) }
  }
}
