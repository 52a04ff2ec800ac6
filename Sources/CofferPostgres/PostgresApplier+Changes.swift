@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

/// Batches of a store that records a change feed (`PostgresChangeFeed.swift`).
extension PostgresApplier {
  /// Runs the batch in a transaction that ends by recording what it changed: the rows are
  /// gathered as the batch's statements write them, and the record, numbered under the feed's
  /// lock, is its last statement before `COMMIT`. Every batch takes a transaction here, also
  /// one of a single statement, so that its record commits with it. After the commit, wakes this
  /// process's followers and trims the feed when the retention says so.
  func runRecording(_ feed: PostgresChangeFeed, _ log: LockedState<ChangeCollector>) async throws
    -> ChangeSummary
  {
    try await feed.mark(connection)
    if let summary = try await applyAlone(feed) { return summary }
    let steps = try steps()
    let locked = changes.preconditions.isEmpty ? nil : try rowLockOrder()
    let serializable = !changes.preconditions.isEmpty && locked == nil
    try await execute(serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN")
    let summary: ChangeSummary
    let recorded: (sequence: UInt64, micros: Int64)?
    do {
      if serializable { try await execute(Self.indexScansUntilCommit) }
      if !serializable, let fast = try await applyIfUnchanged() {
        summary = fast
      } else if !serializable, let fast = try await applyIfRowsUnchanged() {
        summary = fast
      } else {
        summary = try await apply(steps, locked: locked)
      }
      recorded = try await feed.record(log.withLock { $0 }, on: connection)
      try await execute("COMMIT")
    } catch {
      let lost = PostgresFailure.isConnectionLoss(error) || connection.isClosed
      if !lost { try? await execute("ROLLBACK") }
      if PostgresFailure.sqlState(of: error) == "23505", !lost {
        throw try await diagnoseUniqueViolation(cause: error)
      }
      throw error
    }
    guard let recorded else { return summary }
    feed.signal.notify()
    if let trim = feed.retention.withLock({ $0 }).trim(
      afterCommitting: recorded.sequence, at: recorded.micros)
    {
      // The batch is committed: a trim that fails now is made by a later batch.
      let (sql, binds) = feed.trimQuery(trim)
      _ = try? await query(sql, binds)
    }
    return summary
  }

  /// Applies a batch of one insert, update or delete by id, without preconditions, and records
  /// it, in one statement: the write is a common table expression that the record's lock waits
  /// for, so the statement commits both at once (one round trip, as with the feed off), and
  /// records nothing when the write changed no row. `nil` for any other batch.
  func applyAlone(_ feed: PostgresChangeFeed) async throws -> ChangeSummary? {
    guard changes.preconditions.isEmpty, changes.operations.count == 1 else { return nil }
    let operation = changes.operations[0]
    let (table, reshape) = try resolve(operation.entity)
    var collector = ChangeCollector()
    var binds: PostgresBindings
    let sql: String
    switch operation {
    case .insert(_, let made):
      let row = reshape(made)
      binds = bindings(row, table)
      // The write is referred to by the record: it answers a row.
      sql = table.byID.insert + " RETURNING 1"
      collector.stored(row, in: table.schema, existed: false)
    case .update(_, let made):
      let row = reshape(made)
      binds = bindings(row, table)
      sql = table.byID.update
      collector.stored(row, in: table.schema, existed: true)
    case .delete(_, let id):
      binds = PostgresBindings(capacity: 4)
      binds.append(id, as: table.kinds[table.schema.idPosition])
      sql = table.byID.delete
      collector.removed(id: id, from: table.schema)
    default:
      return nil
    }
    guard let payload = collector.encoded() else { return nil }
    let first = binds.count + 1
    binds.append(.bytes(Data(payload)), as: .bytes)
    binds.append(.string(feed.schema), as: .string)
    binds.append(.string(feed.channel), as: .string)
    let recorded: (sequence: UInt64, micros: Int64)?
    do {
      recorded = try feed.numbers(
        try await query(feed.recordingSQL(sql, parameters: first), binds))
    } catch  where PostgresFailure.sqlState(of: error) == "23505" && !connection.isClosed {
      throw try await diagnoseUniqueViolation(cause: error)
    }
    var summary = ChangeSummary()
    guard let recorded else {
      if case .update(_, let made) = operation {
        let id = reshape(made)[table.schema.idPosition]
        throw CofferError.nothingToUpdate(entity: table.schema.name, id: id, store: store)
      }
      return summary
    }
    switch operation {
    case .insert: summary.inserted = 1
    case .update: summary.updated = 1
    default: summary.deleted = 1
    }
    feed.signal.notify()
    if let trim = feed.retention.withLock({ $0 }).trim(
      afterCommitting: recorded.sequence, at: recorded.micros)
    {
      let (sql, binds) = feed.trimQuery(trim)
      _ = try? await query(sql, binds)
    }
    return summary
  }

  /// Runs a `DELETE … RETURNING id` and gathers the ids it removed.
  func removedIDs(_ sql: String, _ binds: PostgresBindings, _ table: PostgresTable) async throws -> [Value] {
    let kind = table.kinds[table.schema.idPosition]
    var ids: [Value] = []
    for row in try await query(sql, binds) {
      guard let cell = row.first(where: { _ in true }) else { continue }
      ids.append(try PostgresValues.read(cell.bytes, as: kind))
    }
    log?.withLock { log in
      for id in ids { log.removed(id: id, from: table.schema) }
    }
    return ids
  }

  /// Upserts a run of rows (bound in `binds`) in one statement that answers each row's id and
  /// whether it was inserted, and gathers each as an insert or an update.
  func upsertRecording(
    _ rows: [Row], _ binds: PostgresBindings, _ table: PostgresTable, to summary: inout ChangeSummary
  ) async throws {
    let kind = table.kinds[table.schema.idPosition]
    var inserted: Set<Value> = []
    for answer in try await query(table.upsertManyReturningSQL, binds) {
      var cells = answer.makeIterator()
      guard let id = cells.next(), let flag = cells.next() else { continue }
      if case .bool(true) = try PostgresValues.read(flag.bytes, as: .bool) {
        inserted.insert(try PostgresValues.read(id.bytes, as: kind))
      }
    }
    summary.inserted += inserted.count
    summary.updated += rows.count - inserted.count
    log?.withLock { log in
      for row in rows {
        log.stored(row, in: table.schema, existed: !inserted.contains(row[table.schema.idPosition]))
      }
    }
  }
}
