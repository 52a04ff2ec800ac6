@_spi(Backend) import Coffer
import Foundation

@_spi(Backend) extension LMDBBackend: SnapshotReading {
  /// Runs `body` with one read transaction held until it returns: every read through the
  /// snapshot sees the state committed when it began. Writers go on meanwhile; the map cannot
  /// grow while it is open, so keep snapshots short.
  ///
  /// A read transaction can use only the database handles open when it began, so every stored
  /// entity's databases are opened first: otherwise a snapshot that is this process's first use
  /// of an entity (which `Store` prepares inside the snapshot) could not read it.
  @_spi(Backend) public func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws
    -> R
  {
    try checkOpen()
    for attempt in 0..<3 {
      // The handles published before the transaction begins are open in it.
      let opened = Set(entities.withLock { $0.keys })
      let outcome: SnapshotOutcome<R> = try await environment.withSnapshot { transaction in
        if attempt < 2,
          try Catalog.entityNames(in: transaction, catalog: catalog).contains(where: { !opened.contains($0) })
        {
          return .missingHandles
        }
        return .done(try await body(LMDBSnapshot(backend: self, transaction: transaction)))
      }
      guard case .done(let result) = outcome else {
        try await openStoredEntities()
        continue
      }
      return result
    }
    // Unreachable: the last attempt always runs the body.
    throw CofferError(.backendFailure, "The snapshot could not open the stored entities.", store: name)
  }

  /// Opens the databases of every entity the catalog lists that this backend has no handle for,
  /// with the schema it is stored under (a later prepare evolves it as usual).
  private func openStoredEntities() async throws {
    let opened = Set(entities.withLock { $0.keys })
    let missing = try environment.read { try Catalog.schemas(in: $0, catalog: catalog) }
      .filter { !opened.contains($0.name) }
    if !missing.isEmpty { try await prepare(missing) }
  }
}

/// What one attempt at a snapshot gave: the body's result, or the need to open handles first.
private enum SnapshotOutcome<R> {
  case done(R)
  case missingHandles
}

@_spi(Backend) extension LMDBBackend: CommitObserving {
  /// The id of the last write transaction committed to the store, by any process.
  public func commitMarker() async throws -> UInt64? {
    try environment.lastTransactionID()
  }
}

/// A read transaction a snapshot holds. A lock keeps tasks that share the snapshot from using
/// the transaction at once (LMDB allows one thread in a transaction at a time).
///
/// `@unchecked Sendable`: the transaction is used only under `lock`, and only inside
/// ``LMDBBackend/withSnapshot(_:)``, which keeps it open.
struct LMDBSnapshot: StorageSnapshot, @unchecked Sendable {
  let backend: LMDBBackend
  let transaction: Transaction
  let lock = NSLock()

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try lock.withLock { try backend.read(query, in: transaction, visit) }
  }

  func count(_ query: Query) async throws -> Int {
    try lock.withLock { try backend.count(query, in: transaction) }
  }
}
