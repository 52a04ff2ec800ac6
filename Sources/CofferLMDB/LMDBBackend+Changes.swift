import CLMDB
@_spi(Backend) import Coffer
import Foundation

/// The change feed's state in one handle. The feed is one LMDB database of recorded batches,
/// keyed by their number (8 bytes, big-endian), each value the commit time (8 bytes) and the
/// payload; the catalog names the database (`changes:database`) and holds the number trimmed
/// through. The last number given is the database's last key; a trim that removes batches also
/// keeps it in the catalog (`changes:last`), so that numbers go on from it once the database is
/// empty. A commit thus writes the feed's database alone, not the catalog too. The feed is on
/// exactly when the catalog names it.
final class LMDBChangeFeed: Sendable {
  static let databaseKey = Array("changes:database".utf8)
  static let lastKey = Array("changes:last".utf8)
  static let trimmedKey = Array("changes:trimmed".utf8)
  /// How often a follower looks for batches other processes committed.
  static let poll = Duration.milliseconds(5)

  /// The feed's database once a committed write transaction opened it: from then the handle is
  /// the environment's and valid in every transaction.
  let database = LockedState<MDB_dbi?>(nil)
  let retention = LockedState(ChangeRetention.all)
  let signal = ChangeSignal()

  static func bytes(_ number: UInt64) -> [UInt8] {
    (0..<8).map { UInt8(truncatingIfNeeded: number >> (56 - 8 * $0)) }
  }

  static func number(_ bytes: UnsafeRawBufferPointer?) -> UInt64 {
    guard let bytes, bytes.count >= 8 else { return 0 }
    return (0..<8).reduce(0) { $0 << 8 | UInt64(bytes[$1]) }
  }

  /// The feed's database in a write transaction, opened when the catalog names it; `nil` when
  /// the feed is off.
  func database(in transaction: Transaction, catalog: MDB_dbi) throws -> MDB_dbi? {
    if let known = database.withLock({ $0 }) { return known }
    guard let name = try transaction.get(catalog, Self.databaseKey) else { return nil }
    return try transaction.open(String(decoding: name, as: UTF8.self), flags: 0)
  }

  /// The number of the newest batch recorded (or trimmed away), in `transaction`; 0 when none.
  static func last(in database: MDB_dbi, catalog: MDB_dbi, transaction: Transaction) throws -> UInt64 {
    let newest = try transaction.withCursor(database) { cursor in
      try cursor.move(MDB_LAST) ? number(cursor.key) : 0
    }
    return max(newest, number(try transaction.get(catalog, lastKey)))
  }

  /// Records a batch in the write transaction that applies it, numbered one above the last.
  func record(_ collector: ChangeCollector, in database: MDB_dbi, catalog: MDB_dbi, transaction: Transaction)
    throws
  {
    let micros = Value.microseconds(since1970: Date())
    // The commit time and the payload in one buffer, written once.
    guard let value = collector.encoded(after: Self.bytes(UInt64(bitPattern: micros))) else { return }
    let sequence = try Self.last(in: database, catalog: catalog, transaction: transaction) + 1
    // Appended after the newest key, never over one: a number already taken (a store written by
    // a build that numbered batches otherwise) fails the batch instead of replacing a batch.
    guard try transaction.put(database, Self.bytes(sequence), value, flags: MDB_NOOVERWRITE | MDB_APPEND)
    else {
      throw CofferError(
        .corruptStore,
        "The change feed already holds batch \(ChangePosition(sequence: sequence)), which this commit would "
          + "number again: a process of another Coffer version may be writing the store. Stop it, then reopen."
      )
    }
    if let trim = retention.withLock({ $0 }).trim(afterCommitting: sequence, at: micros) {
      try Self.trim(trim, in: database, catalog: catalog, transaction: transaction)
    }
  }

  /// Removes recorded batches and raises the trimmed bound, in a write transaction.
  static func trim(_ trim: ChangeTrim, in database: MDB_dbi, catalog: MDB_dbi, transaction: Transaction)
    throws
  {
    let last = try Self.last(in: database, catalog: catalog, transaction: transaction)
    var doomed: [[UInt8]] = []
    var bound: UInt64 = 0
    try transaction.withCursor(database) { cursor in
      var found = try cursor.move(MDB_FIRST)
      while found {
        let sequence = number(cursor.key)
        let keep: Bool
        switch trim {
        case .through(let through): keep = sequence > min(through, last)
        case .committedBefore(let micros): keep = Int64(bitPattern: number(cursor.data)) >= micros
        }
        if keep { break }
        doomed.append(Array(cursor.key))
        bound = sequence
        found = try cursor.move(MDB_NEXT)
      }
    }
    if case .through(let through) = trim { bound = max(bound, min(through, last)) }
    // The last number outlives the batches: the next is numbered after it.
    if !doomed.isEmpty { try transaction.put(catalog, lastKey, bytes(last)) }
    for key in doomed { try transaction.delete(database, key) }
    let trimmed = number(try transaction.get(catalog, trimmedKey))
    if bound > trimmed { try transaction.put(catalog, trimmedKey, bytes(bound)) }
  }
}

extension LMDBBackend {
  /// Names the feed's database in the catalog, creating it, if the feed is not on yet.
  @_spi(Backend) public func startRecordingChanges(retention: ChangeRetention) async throws {
    try checkOpen()
    feed.retention.withLock { $0 = retention }
    let opened = try await environment.writeOffPool { [self] transaction -> MDB_dbi in
      if let known = try feed.database(in: transaction, catalog: catalog) { return known }
      let name = try Catalog.unusedName("coffer:changes", entity: "coffer:changes", in: transaction)
      guard let made = try transaction.open(name, flags: MDB_CREATE) else {
        throw CofferError(.backendFailure, "The change feed's database could not be made.", store: self.name)
      }
      try transaction.put(catalog, LMDBChangeFeed.databaseKey, Array(name.utf8))
      return made
    }
    feed.database.withLock { $0 = opened }
  }

  /// After a batch that recorded in the feed committed: keeps the database's handle, which the
  /// commit made the environment's, and wakes this handle's followers.
  func feedCommitted(_ database: MDB_dbi) {
    feed.database.withLock { $0 = $0 ?? database }
    feed.signal.notify()
  }

  /// The feed's database, opened in a write transaction the first time; `nil` while the feed
  /// is off.
  func feedDatabase() async throws -> MDB_dbi? {
    if let known = feed.database.withLock({ $0 }) { return known }
    let on = try environment.read { try $0.get(catalog, LMDBChangeFeed.databaseKey) != nil }
    guard on else { return nil }
    let opened = try await environment.writeOffPool { [self] transaction in
      try feed.database(in: transaction, catalog: catalog)
    }
    feed.database.withLock { $0 = opened }
    return opened
  }

  /// The feed's bounds, from the catalog and the feed's last key, in one read transaction.
  @_spi(Backend) public func changeFeedBounds() async throws -> ChangeFeedBounds? {
    try checkOpen()
    guard let database = try await feedDatabase() else { return nil }
    return try environment.read { transaction in
      ChangeFeedBounds(
        trimmedThrough: LMDBChangeFeed.number(try transaction.get(catalog, LMDBChangeFeed.trimmedKey)),
        last: try LMDBChangeFeed.last(in: database, catalog: catalog, transaction: transaction))
    }
  }

  /// The batches after `sequence`, in one read transaction.
  @_spi(Backend) public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]
  {
    try checkOpen()
    guard let database = try await feedDatabase() else { throw CofferError.changeFeedOff(store: name) }
    return try environment.read { transaction in
      let trimmed = LMDBChangeFeed.number(try transaction.get(catalog, LMDBChangeFeed.trimmedKey))
      if sequence < trimmed {
        throw CofferError.changesTrimmed(after: sequence, trimmedThrough: trimmed, store: name)
      }
      var batches: [RecordedChanges] = []
      try transaction.withCursor(database) { cursor in
        var found = try cursor.seek(LMDBChangeFeed.bytes(sequence &+ 1))
        while found, batches.count < max(limit, 1) {
          let data = cursor.data
          guard data.count >= 8 else {
            throw CofferError(
              .corruptStore, "A batch of the change feed is cut short. Trim the feed past it.", store: name)
          }
          batches.append(
            RecordedChanges(
              sequence: LMDBChangeFeed.number(cursor.key),
              committedAt: Int64(
                bitPattern: LMDBChangeFeed.number(UnsafeRawBufferPointer(rebasing: data[0..<8]))),
              payload: Array(data[8...])))
          found = try cursor.move(MDB_NEXT)
        }
      }
      return batches
    }
  }

  /// Trims the feed in a write transaction.
  @_spi(Backend) public func trimChanges(_ trim: ChangeTrim) async throws {
    try checkOpen()
    guard try await feedDatabase() != nil else { throw CofferError.changeFeedOff(store: name) }
    try await environment.writeOffPool { [self] transaction in
      guard let database = try feed.database(in: transaction, catalog: catalog) else { return }
      try LMDBChangeFeed.trim(trim, in: database, catalog: catalog, transaction: transaction)
    }
  }

  /// Waits for this handle's next commit, looking every few milliseconds for another handle's
  /// or process's.
  @_spi(Backend) public func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    try await feed.signal.waitForChanges(after: sequence, timeout: timeout, poll: LMDBChangeFeed.poll) {
      try await changeFeedBounds()
    }
  }
}

@_spi(Backend) extension LMDBBackend: ChangeRecording {}
