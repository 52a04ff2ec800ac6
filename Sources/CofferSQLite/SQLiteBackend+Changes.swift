import CSQLite
@_spi(Backend) import Coffer
import CofferSQL
import Foundation

/// The change feed's state in one handle: whether the feed is known to be on, the retention
/// this handle trims to, and the signal that wakes this process's followers.
final class SQLiteChangeFeed: Sendable {
  /// The table of recorded batches: one row per batch, numbered in commit order.
  static let changesTable = "coffer_changes"
  /// One row holding the feed's bounds; the feed is on exactly when this table exists. Its
  /// `last` is raised only by trims: the last number given is the larger of it and the newest
  /// batch's, so that a commit writes no page but its batch's.
  static let boundsTable = "coffer_change_feed"
  /// The last number given, as an SQL expression over the bounds row.
  static let lastSQL = #"max("last", coalesce((SELECT max("sequence") FROM "coffer_changes"), 0))"#
  /// The insert of a batch numbered one above the last; its commit time and payload are `?1`
  /// and `?2`. Made once: a commit only looks it up.
  static let recordSQL =
    #"INSERT INTO "coffer_changes" ("sequence", "committed_at", "payload") "#
    + #"SELECT \#(lastSQL) + 1, ?1, ?2 FROM "coffer_change_feed" WHERE "id" = 1"#
  /// How often a follower looks for batches other processes committed.
  static let poll = Duration.milliseconds(5)

  /// Once on, a feed stays on: a `true` here is never wrong.
  let knownOn = LockedState(false)
  let retention = LockedState(ChangeRetention.all)
  let signal = ChangeSignal()

  /// Whether the feed is on, asked on a connection holding the write lock (or reading a
  /// snapshot): a store's feed is turned on only under the write lock.
  func isOn(_ connection: SQLiteConnection) throws -> Bool {
    if knownOn.withLock({ $0 }) { return true }
    let on =
      try connection.text(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1", [.string(Self.boundsTable)])
      == "1"
    if on { knownOn.withLock { $0 = true } }
    return on
  }

  /// Records a batch's changes on the writer, inside the batch's transaction (its savepoint
  /// when several batches share one), numbered one above the last: the writer lock makes
  /// numbers follow commit order. Nothing when the batch changed nothing.
  ///
  /// One statement: the batch is inserted numbered one above the last (the newest batch's number
  /// is the table's largest row id, found at its end; the bounds row keeps the number past a
  /// trim), and SQLite reports the row id it got. The payload is bound where it lies, not copied
  /// first.
  func record(_ collector: ChangeCollector, on connection: SQLiteConnection) throws {
    guard let payload = collector.encoded() else { return }
    let micros = Value.microseconds(since1970: Date())
    try connection.statement(Self.recordSQL).run(micros, payload: payload)
    guard connection.changes == 1 else {
      throw CofferError(
        .corruptStore,
        "The change feed's bounds are missing from the store, so the batch cannot be numbered. "
          + "Copy the store's rows into a new store and turn the feed on there.",
        store: connection.storeName)
    }
    let sequence = sqlite3_last_insert_rowid(connection.handle)
    if let trim = retention.withLock({ $0 }).trim(afterCommitting: UInt64(sequence), at: micros) {
      try Self.trim(trim, on: connection)
    }
  }

  /// Removes recorded batches, raising the trimmed bound, on a connection in a write
  /// transaction.
  static func trim(_ trim: ChangeTrim, on connection: SQLiteConnection) throws {
    let bound: Int64
    switch trim {
    case .through(let sequence):
      let last =
        Int64(try connection.text(#"SELECT \#(lastSQL) FROM "coffer_change_feed" WHERE "id" = 1"#) ?? "0")
        ?? 0
      bound = min(Int64(clamping: sequence), last)
    case .committedBefore(let micros):
      bound =
        Int64(
          try connection.text(
            #"SELECT max("sequence") FROM "coffer_changes" WHERE "committed_at" < ?1"#, [.int(micros)]) ?? "0"
        ) ?? 0
    }
    guard bound > 0 else { return }
    // The last number outlives the batches: the next is numbered after it.
    try connection.run(#"UPDATE "coffer_change_feed" SET "last" = \#(lastSQL) WHERE "id" = 1"#)
    try connection.run(#"DELETE FROM "coffer_changes" WHERE "sequence" <= ?1"#, [.int(bound)])
    try connection.run(
      #"UPDATE "coffer_change_feed" SET "trimmed_through" = max("trimmed_through", ?1) WHERE "id" = 1"#,
      [.int(bound)])
  }
}

extension SQLiteBackend {
  /// Creates the feed's tables, if they are not there yet, in a write transaction.
  @_spi(Backend) public func startRecordingChanges(retention: ChangeRetention) async throws {
    feed.retention.withLock { $0 = retention }
    try await blocking.run { [self] in
      try withWriter { connection in
        try transaction(on: connection, while: "turning the change feed on") {
          try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS "coffer_changes" (
              "sequence" INTEGER PRIMARY KEY, "committed_at" INTEGER NOT NULL, "payload" BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS "coffer_change_feed" (
              "id" INTEGER PRIMARY KEY CHECK ("id" = 1), "trimmed_through" INTEGER NOT NULL,
              "last" INTEGER NOT NULL);
            INSERT OR IGNORE INTO "coffer_change_feed" ("id", "trimmed_through", "last") VALUES (1, 0, 0);
            """)
        }
      }
    }
    feed.knownOn.withLock { $0 = true }
  }

  /// The feed's bounds, read on a reader.
  @_spi(Backend) public func changeFeedBounds() async throws -> ChangeFeedBounds? {
    try checkOpen()
    return try withReader(nil) { reader in
      guard try feed.isOn(reader) else { return nil }
      let statement = try reader.statement(
        #"SELECT "trimmed_through", \#(SQLiteChangeFeed.lastSQL) FROM "coffer_change_feed" WHERE "id" = 1"#)
      return try statement.withBindings([]) {
        guard try statement.stepReading() else { return ChangeFeedBounds(trimmedThrough: 0, last: 0) }
        return ChangeFeedBounds(
          trimmedThrough: UInt64(max(0, statement.int(at: 0))), last: UInt64(max(0, statement.int(at: 1))))
      }
    }
  }

  /// The batches after `sequence`, read on one reader in one read transaction, so the bound
  /// checked and the batches read are of the same state.
  @_spi(Backend) public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]
  {
    try checkOpen()
    return try withReader(nil) { reader in
      try reader.run("BEGIN")
      defer { try? reader.run("COMMIT") }
      guard try feed.isOn(reader) else { throw CofferError.changeFeedOff(store: name) }
      let trimmed =
        UInt64(try reader.text(#"SELECT "trimmed_through" FROM "coffer_change_feed" WHERE "id" = 1"#) ?? "0")
        ?? 0
      if sequence < trimmed {
        throw CofferError.changesTrimmed(after: sequence, trimmedThrough: trimmed, store: name)
      }
      let statement = try reader.statement(
        #"SELECT "sequence", "committed_at", "payload" FROM "coffer_changes" WHERE "sequence" > ?1 "#
          + #"ORDER BY "sequence" LIMIT ?2"#)
      return try statement.withBindings([.int(Int64(clamping: sequence)), .int(Int64(max(limit, 1)))]) {
        var batches: [RecordedChanges] = []
        while try statement.stepReading() {
          batches.append(
            RecordedChanges(
              sequence: UInt64(statement.int(at: 0)), committedAt: statement.int(at: 1),
              payload: Array(statement.data(at: 2))))
        }
        return batches
      }
    }
  }

  /// Trims the feed on the writer.
  @_spi(Backend) public func trimChanges(_ trim: ChangeTrim) async throws {
    try await blocking.run { [self] in
      try withWriter { connection in
        try transaction(on: connection, while: "trimming the change feed") {
          guard try feed.isOn(connection) else { throw CofferError.changeFeedOff(store: name) }
          try SQLiteChangeFeed.trim(trim, on: connection)
        }
      }
    }
  }

  /// Waits for this process's next commit, looking every few milliseconds for another
  /// process's.
  @_spi(Backend) public func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    try await feed.signal.waitForChanges(after: sequence, timeout: timeout, poll: SQLiteChangeFeed.poll) {
      try await changeFeedBounds()
    }
  }
}

@_spi(Backend) extension SQLiteBackend: ChangeRecording {}

extension SQLiteStatement {
  /// Runs an insert of a batch's commit time (parameter 1) and payload (parameter 2), the
  /// payload bound in place: SQLite reads it before this returns, so a bulk batch's hundreds of
  /// kilobytes are not copied into the statement's scratch space first.
  func run(_ micros: Int64, payload: [UInt8]) throws {
    defer {
      sqlite3_reset(handle)
      sqlite3_clear_bindings(handle)
    }
    try checkBinding(sqlite3_bind_int64(handle, 1, micros))
    try payload.withUnsafeBytes { bytes in
      // No destructor: SQLITE_STATIC, the bytes outlive the step below.
      try checkBinding(sqlite3_bind_blob64(handle, 2, bytes.baseAddress, sqlite3_uint64(bytes.count), nil))
      do {
        while try step() {}
      } catch let failure as StepFailure {
        throw connection.failure(failure.code, while: "writing")
      }
    }
  }

  private func checkBinding(_ code: Int32) throws {
    guard code == SQLITE_OK else { throw connection.failure(code, while: "binding a value") }
  }
}

extension SQLiteApplier {
  /// Gathers the ids a delete by query is about to remove, for the change feed.
  func collectDeletes(_ filter: Filter, _ table: SQLiteTable) throws {
    var query = Query(entity: table.schema.name, filter: filter)
    query.layout = table.schema
    for row in try connection.rows(of: query, in: table, store: store) {
      collected?.removed(id: row[table.schema.idPosition], from: table.schema)
    }
  }
}
