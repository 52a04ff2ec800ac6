@_spi(Backend) import Coffer
import Foundation

/// What a check works with: fresh scratch stores of the target, reopened on demand, all closed
/// and removed when the check ends.
final class CheckContext: Sendable {
  let target: ConformanceTarget
  let checkID: String
  /// This check's scratch folder.
  let directory: String
  /// What every store the check opens logs, at every level.
  let log = LogCapture()
  private struct State {
    var counter = 0
    var urls: [ObjectIdentifier: StoreURL] = [:]
    var open: [Store] = []
  }
  private let state = LockedState(State())

  init(target: ConformanceTarget, checkID: String, directory: String) {
    self.target = target
    self.checkID = checkID
    self.directory = directory
  }

  /// A new, empty store of the target.
  func store() async throws -> Store {
    let name = state.withLock { state in
      state.counter += 1
      return "\(checkID)-\(state.counter)-\(UUID().uuidString.prefix(8))"
    }
    return try await open(target.scratchURL(in: directory, name: name))
  }

  /// A new store holding `values`, inserted in one batch.
  func store<T: Storable>(with values: [T]) async throws -> Store {
    let store = try await store()
    try await store.prepare([T.self])
    if !values.isEmpty { try await store.insert(values) }
    return store
  }

  /// Closes a store and opens the same location again (for targets that are reopenable).
  func reopen(_ store: Store) async throws -> Store {
    guard let url = state.withLock({ $0.urls[ObjectIdentifier(store)] }) else {
      throw CheckFailure("The check tried to reopen a store it did not make.")
    }
    try await store.close()
    return try await open(url)
  }

  /// Another handle on the same location as `store`, open at the same time (for targets whose
  /// location can be opened twice: a named memory store, SQLite, LMDB).
  func secondHandle(_ store: Store) async throws -> Store {
    guard let url = state.withLock({ $0.urls[ObjectIdentifier(store)] }) else {
      throw CheckFailure("The check asked for a second handle on a store it did not make.")
    }
    return try await open(url)
  }

  /// Closes every store the check opened (errors are ignored: closing twice is harmless) and
  /// lets the backend forget scratch stores that live outside the scratch folder.
  func closeAll() async {
    let (stores, urls) = state.withLock { state in
      defer {
        state.open.removeAll()
        state.urls.removeAll()
      }
      return (state.open, Array(Set(state.urls.values)))
    }
    for store in stores { try? await store.close() }
    for url in urls { await target.removeScratch(url) }
  }

  private func open(_ url: StoreURL) async throws -> Store {
    let logger = log.logger(alsoTo: target.logger)
    let store = Store(backend: try await target.open(url, logger: logger), logger: logger)
    state.withLock { state in
      state.urls[ObjectIdentifier(store)] = url
      state.open.append(store)
    }
    return store
  }
}
