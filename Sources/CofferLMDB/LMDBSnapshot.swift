@_spi(Backend) import Coffer
import Foundation

extension LMDBBackend {
  /// Runs `body` with one read transaction held until it returns: every read through the
  /// snapshot sees the state committed when it began. Writers go on meanwhile; the map cannot
  /// grow while it is open, so keep snapshots short.
  public func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws -> R {
    try checkOpen()
    return try await environment.withSnapshot { transaction in
      try await body(LMDBSnapshot(backend: self, transaction: transaction))
    }
  }
}

extension LMDBBackend {
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
