/// One committed state of a store, read by several queries inside ``Store/snapshot(_:)``: a
/// batch applied while the snapshot is open is invisible to it.
///
/// ```swift
/// let (accounts, total) = try await store.snapshot { snapshot in
///   (try await snapshot.query(Account.self).count(), try await snapshot.query(Account.self).fetch())
/// }
/// ```
///
/// Use it only inside the body that received it.
public struct StoreSnapshot: Sendable {
  /// The store the snapshot reads.
  public let store: Store
  let reader: any StorageSnapshot

  /// The value of a type with an id in the snapshot's state, or `nil`.
  public func get<T: Storable>(_ type: T.Type, id: T.ID) async throws -> T? {
    let codec = try await store.codec(for: type)
    var value: T?
    try await store.readInTurn {
      try await reader.read(Query(lookingUp: id.storedValue, in: codec.schema)) {
        value = try codec.decode($0)
      }
    }
    return value
  }

  /// The values of a type with the given ids in the snapshot's state, in the order of `ids`,
  /// skipping ids that are not stored.
  public func get<T: Storable>(_ type: T.Type, ids: [T.ID]) async throws -> [T] {
    let codec = try await store.codec(for: type)
    if ids.isEmpty { return [] }
    let stored = ids.map(\.storedValue)
    var byID: [Value: T] = [:]
    let idPosition = codec.schema.idPosition
    try await store.readInTurn {
      try await reader.read(Query(lookingUp: stored, in: codec.schema)) {
        byID[try $0.value(at: idPosition)] = try codec.decode($0)
      }
    }
    return stored.compactMap { byID[$0] }
  }

  /// A query over the values of a type, run on the snapshot's state. It can only read:
  /// ``StoreQuery/delete()`` and ``StoreQuery/update(_:)`` on it throw.
  public func query<T: Storable>(_ type: T.Type) -> StoreQuery<T> {
    var query = StoreQuery<T>(store: store)
    query.source = .snapshot(reader)
    return query
  }
}

extension Store {
  /// Runs `body` with a view of the store as it is now: every read through the
  /// ``StoreSnapshot`` sees that one state, whatever other writers apply meanwhile. Writers are
  /// not held up; the view ends when `body` returns.
  ///
  /// One read transaction on SQLite, LMDB and PostgreSQL (keep it short: on LMDB an open
  /// snapshot keeps the file from reusing pages, and the map cannot grow); a copy-on-write
  /// copy of the tables in memory and in a property-list store.
  ///
  /// - Throws: ``CofferError/Code/unsupported`` on a backend that is not
  ///   ``SnapshotReading``; what `body` threw.
  public func snapshot<R>(_ body: (StoreSnapshot) async throws -> R) async throws -> R {
    let backend = try self.backend.snapshotReading()
    return try await readInTurn {
      try await backend.withSnapshot { reader in try await body(StoreSnapshot(store: self, reader: reader)) }
    }
  }
}

/// Where a ``StoreQuery`` reads when it is not the store itself.
enum QuerySource: Sendable {
  /// A snapshot's one state.
  case snapshot(any StorageSnapshot)
  /// The store, remembering what was read for the transaction's preconditions.
  case transaction(StoreTransaction)
}
