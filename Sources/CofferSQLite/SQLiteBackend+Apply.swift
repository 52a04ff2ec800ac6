import CSQLite
@_spi(Backend) import Coffer
import CofferSQL
import Tracing

/// `SQLITE_CONSTRAINT_PRIMARYKEY`, which Swift does not import (a macro expression).
let constraintPrimaryKey = SQLITE_CONSTRAINT | (6 << 8)
/// `SQLITE_CONSTRAINT_UNIQUE`.
let constraintUnique = SQLITE_CONSTRAINT | (8 << 8)

extension SQLiteBackend {
  /// Applies the batch in a `BEGIN IMMEDIATE` transaction on the writer, in a savepoint of its
  /// own; any failure rolls the batch back. When this returns, the commit is on disk as
  /// ``Configuration/synchronous`` says. Batches that wait for the writer while it is busy are
  /// applied together in its next transaction, one commit for all (see ``SQLiteGroupCommit``).
  /// A bulk insert's rows are made one at a time, each bound, written and dropped before the
  /// next is made.
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    if changes.isEmpty {
      try checkOpen()
      return ChangeSummary()
    }
    // The span of this call, for the statements the writer's thread runs for it: one test of
    // `nil` when statements are not traced.
    let span = statementTracer == nil ? nil : InstrumentationContext.current
    return try await groupCommit.apply(changes, span: span, on: blocking) { [self] turn in applyTogether(turn)
    }
  }

  /// Applies the batches of one turn of the writer in one transaction, each all or nothing in
  /// a savepoint, and returns each one's summary or error, in order. A failure of the
  /// transaction itself (it could not begin or commit, or the disk failed) fails them all.
  ///
  /// When statements are traced, each batch's statements are spans under its call's span; the
  /// transaction's `BEGIN` and `COMMIT` are under the first batch's, the commit linked to the
  /// others' spans.
  func applyTogether(_ batches: [SQLiteGroupCommit.Batch]) -> [Result<ChangeSummary, any Error>] {
    let first = batches.first?.span
    do {
      return try withWriter { connection in
        // Read under the writer lock: `prepare` changes the catalog only while holding it.
        let known = catalog.withLock { $0.tables }
        if batches.count == 1 {
          let summary = try connection.tracingStatements(under: first) {
            try transaction(on: connection, while: "applying a batch") {
              try apply(
                batches[0].changes, on: connection, tables: known, recording: try feed.isOn(connection))
            }
          }
          if feed.knownOn.withLock({ $0 }) { feed.signal.notify() }
          return [.success(summary)]
        }
        // Without a tracer every span is `nil`, and so is `first`: nothing is collected.
        let others = first == nil ? [] : batches.dropFirst().compactMap(\.span)
        let results = try transaction(on: connection, while: "applying batches", span: first, linking: others)
        {
          let recording = try feed.isOn(connection)
          var results: [Result<ChangeSummary, any Error>] = []
          results.reserveCapacity(batches.count)
          for batch in batches {
            let changes = batch.changes
            let result: Result<ChangeSummary, any Error> = try connection.tracingStatements(under: batch.span)
            {
              try connection.run("SAVEPOINT coffer_batch")
              let summary: ChangeSummary
              do {
                summary = try apply(changes, on: connection, tables: known, recording: recording)
              } catch {
                // An error that ended the whole transaction took every batch of the turn with it.
                guard sqlite3_get_autocommit(connection.handle) == 0 else { throw error }
                try connection.run("ROLLBACK TO coffer_batch")
                try connection.run("RELEASE coffer_batch")
                return .failure(error)
              }
              try connection.run("RELEASE coffer_batch")
              return .success(summary)
            }
            results.append(result)
          }
          return results
        }
        if feed.knownOn.withLock({ $0 }) { feed.signal.notify() }
        return results
      }
    } catch {
      return batches.map { _ in .failure(error) }
    }
  }

  /// Checks a batch's preconditions, then applies its operations, inside the writer's
  /// transaction, recording what they changed in the change feed when `recording`.
  private func apply(
    _ changes: ChangeSet, on connection: SQLiteConnection, tables: [String: SQLiteTable], recording: Bool
  ) throws -> ChangeSummary {
    let applier = SQLiteApplier(connection: connection, tables: tables, layouts: changes.layouts, store: name)
    if recording { applier.collected = ChangeCollector() }
    for precondition in changes.preconditions {
      let table = try applier.table(precondition.query.entity)
      try precondition.verify(
        try connection.rows(of: precondition.query, in: table, store: name), store: name)
    }
    for operation in changes.operations { try applier.apply(operation) }
    if let collected = applier.collected { try feed.record(collected, on: connection) }
    return applier.summary
  }

  /// Runs `body` on the writer connection, under its lock. Called on ``blocking``'s thread:
  /// the lock wait, SQLite's busy wait for other processes and the commit's `fsync` all block.
  func withWriter<R: Sendable>(_ body: (SQLiteConnection) throws -> R) throws -> R {
    try writer.withLock { connection in
      guard let connection else { throw closedError() }
      return try body(connection)
    }
  }

  /// Runs `body` in a write transaction, committing if it returns and rolling back if it throws.
  /// When statements are traced and `span` is given, `BEGIN` and `COMMIT` are spans under it, and
  /// the commit is linked to the spans in `linked`, the other calls it made durable.
  func transaction<R>(
    on connection: SQLiteConnection, while action: String, span: InstrumentationContext? = nil,
    linking linked: [InstrumentationContext] = [], _ body: () throws -> R
  ) throws -> R {
    // Without a span of their own, BEGIN and COMMIT belong to the span the caller set, if any.
    func traced(linking linked: [InstrumentationContext] = [], _ statement: () throws -> Void) rethrows {
      guard let span else { return try statement() }
      try connection.tracingStatements(under: span, linking: linked, statement)
    }
    try traced { try connection.run("BEGIN IMMEDIATE") }
    let result: R
    do {
      result = try body()
      try traced(linking: linked) { try connection.run("COMMIT") }
    } catch {
      if sqlite3_get_autocommit(connection.handle) == 0 { try? connection.run("ROLLBACK") }
      throw error
    }
    return result
  }
}

/// Applies the operations of one batch, reusing the statements of the entity it is working on.
/// A class: the per-row calls of a bulk insert would otherwise copy it. One batch uses it, on
/// the thread that holds the writer, so its state needs no runtime exclusivity checks.
final class SQLiteApplier {
  let connection: SQLiteConnection
  let tables: [String: SQLiteTable]
  /// The schemas the batch's rows were made for (see ``ChangeSet/layouts``).
  let layouts: [String: EntitySchema]
  let store: String
  @exclusivity(unchecked) var summary = ChangeSummary()
  /// What the batch changed, row by row, when the store records a change feed.
  @exclusivity(unchecked) var collected: ChangeCollector?
  @exclusivity(unchecked) private var current: (entity: String, table: SQLiteTable)?
  /// Puts the current entity's rows in the shape of its table.
  @exclusivity(unchecked) private(set) var reshape = RowReshaper.identity
  /// The statements of the current table, by ``SQLiteTable/Operation``.
  @exclusivity(unchecked) private var statements: [SQLiteStatement?] = Array(
    repeating: nil, count: SQLiteTable.Operation.allCases.count)
  /// The current table's partial updates made so far, by the indexed columns they leave out
  /// (see ``SQLiteTable/partialUpdate(keeping:)``).
  @exclusivity(unchecked) private var partialUpdates: [UInt64: (sql: String, positions: [Int])?] = [:]

  init(
    connection: SQLiteConnection, tables: [String: SQLiteTable], layouts: [String: EntitySchema],
    store: String
  ) {
    self.connection = connection
    self.tables = tables
    self.layouts = layouts
    self.store = store
  }

  func apply(_ operation: ChangeSet.Operation) throws {
    let table = try resolve(operation.entity)
    switch operation {
    case .insert(_, let made):
      try insert(reshape(made), into: table)
    case .insertMany(_, let rows):
      for position in 0..<rows.count { try insert(reshape(try rows.row(at: position)), into: table) }
    case .update(_, let made):
      let row = reshape(made)
      guard try update(row, table) else {
        let id = row[table.schema.idPosition]
        throw CofferError.nothingToUpdate(entity: table.schema.name, id: id, store: store)
      }
      summary.updated += 1
      collected?.stored(row, in: table.schema, existed: true)
    case .upsert(_, let made):
      let row = reshape(made)
      if try update(row, table) {
        summary.updated += 1
        collected?.stored(row, in: table.schema, existed: true)
      } else {
        try insert(row, into: table)
      }
    case .delete(_, let id):
      try statement(.delete, table).run([id])
      summary.deleted += connection.changes
      if connection.changes > 0 { collected?.removed(id: id, from: table.schema) }
    case .deleteMatching(_, let filter):
      if collected != nil { try collectDeletes(filter, table) }
      let built = try SQLiteQuery.delete(filter, in: table.layout)
      try connection.statement(built.sql).run(built.bindings)
      summary.deleted += connection.changes
    case .updateMatching(_, let filter, let changes):
      // Each matching row as stored now, in id order, changed and written like an update.
      let updates = try CompiledFieldUpdates(changes, schema: table.schema)
      var query = Query(entity: table.schema.name, filter: filter)
      query.layout = table.schema
      for row in try connection.rows(of: query, in: table, store: store) {
        let changed = try updates.apply(to: row, store: store)
        if try update(changed, table) {
          summary.updated += 1
          collected?.stored(changed, in: table.schema, existed: true)
        }
      }
    }
  }

  /// The table of an entity, or the error for one that was never prepared.
  func table(_ entity: String) throws -> SQLiteTable {
    guard let table = tables[entity] else {
      throw CofferError.neverPrepared(entity, store: store, inBatch: true)
    }
    return table
  }

  /// The table of an entity, whose statements the applier then keeps at hand.
  func resolve(_ entity: String) throws -> SQLiteTable {
    if let current, current.entity == entity { return current.table }
    let table = try table(entity)
    reshape = try RowReshaper(layouts[entity], storedAs: table.schema, store: store)
    current = (entity, table)
    for index in statements.indices { statements[index] = nil }
    partialUpdates.removeAll(keepingCapacity: true)
    return table
  }

  private func statement(_ operation: SQLiteTable.Operation, _ table: SQLiteTable) throws
    -> SQLiteStatement
  {
    if let statement = statements[operation.rawValue] { return statement }
    let statement = try connection.statement(for: table, operation)
    statements[operation.rawValue] = statement
    return statement
  }

  /// Inserts a row into a table ``resolve(_:)`` returned.
  func insert(_ row: Row, into table: SQLiteTable) throws {
    let code = try write(row, try statement(.insert, table))
    if code != SQLITE_DONE { throw try conflict(code, inserting: row, into: table) }
    summary.inserted += 1
    collected?.stored(row, in: table.schema, existed: false)
  }

  /// The error for a row whose insert broke a constraint.
  private func conflict(_ code: Int32, inserting row: Row, into table: SQLiteTable) throws
    -> CofferError
  {
    // SQLite reports whichever constraint it checks first; a stored id comes first in Coffer.
    if code == constraintPrimaryKey { return duplicate(row, table) }
    return try exists(row, table) ? duplicate(row, table) : uniqueViolation(row, table)
  }

  private func duplicate(_ row: Row, _ table: SQLiteTable) -> CofferError {
    let id = row[table.schema.idPosition]
    return CofferError.idAlreadyStored(entity: table.schema.name, id: id, store: store)
  }

  private func exists(_ row: Row, _ table: SQLiteTable) throws -> Bool {
    let statement = try statement(.exists, table)
    return try statement.withBindings([row[table.schema.idPosition]]) {
      try statement.stepReading() && statement.int(at: 0) > 0
    }
  }

  /// Replaces the stored row with the row's id; `false` when there is none.
  ///
  /// For a table with indexes, the stored values of the indexed columns are read first, and
  /// the columns that would not change are left out of the `UPDATE`: SQLite rewrites the index
  /// entries of every column an `UPDATE` sets, changed or not, and one lookup costs less than
  /// taking an entry out of an index and putting it back.
  private func update(_ row: Row, _ table: SQLiteTable) throws -> Bool {
    guard !table.indexedPositions.isEmpty else { return try updateAll(row, table) }
    let probe = try statement(.indexedValues, table)
    let unchanged: UInt64? = try probe.withBindings([row[table.schema.idPosition]]) {
      guard try probe.stepReading() else { return nil }
      var unchanged: UInt64 = 0
      for (bit, position) in table.indexedPositions.enumerated()
      where probe.holds(row[position], at: Int32(bit)) {
        unchanged |= 1 << UInt64(bit)
      }
      return unchanged
    }
    guard let unchanged else { return false }
    guard unchanged != 0 else { return try updateAll(row, table) }
    let partial: (sql: String, positions: [Int])?
    if let known = partialUpdates[unchanged] {
      partial = known
    } else {
      partial = table.partialUpdate(keeping: unchanged)
      partialUpdates[unchanged] = partial
    }
    // Every column is indexed and none changes: the row stays as it is.
    guard let partial else { return true }
    let code = try write(Row(partial.positions.map { row[$0] }), try connection.statement(partial.sql))
    if code == constraintUnique { throw try uniqueViolation(row, table) }
    return connection.changes > 0
  }

  /// Replaces every column of the stored row with the row's id; `false` when there is none.
  private func updateAll(_ row: Row, _ table: SQLiteTable) throws -> Bool {
    let code = try write(row, try statement(.update, table))
    if code == constraintUnique { throw try uniqueViolation(row, table) }
    return connection.changes > 0
  }

  /// Binds a row and steps; returns `SQLITE_DONE` or a constraint code, throws anything else.
  private func write(_ row: Row, _ statement: SQLiteStatement) throws -> Int32 {
    // The closure captures only what it uses: capturing `self` would copy the applier for
    // every bound value.
    try statement.withBindings(row.values) { [connection, handle = statement.handle] in
      let code = sqlite3_step(handle)
      if code == SQLITE_DONE || code == constraintPrimaryKey || code == constraintUnique { return code }
      throw connection.failure(code, while: "applying a batch")
    }
  }

  /// The error for a row that broke a unique index, naming the row that holds its values.
  private func uniqueViolation(_ row: Row, _ table: SQLiteTable) throws -> CofferError {
    let schema = table.schema
    let id = row[schema.idPosition]
    let idColumn = table.columns[schema.idPosition]
    for index in schema.uniqueIndexes {
      let positions = index.fields.compactMap { schema.position(of: $0) }
      let key = positions.map { row[$0] }
      if key.contains(where: \.isNull) { continue }
      let conditions = positions.enumerated().map { "\(table.columns[$1]) = ?\($0 + 1)" }
      let sql =
        "SELECT \(idColumn) FROM \(table.table) WHERE \(conditions.joined(separator: " AND ")) "
        + "AND \(idColumn) <> ?\(positions.count + 1) LIMIT 1"
      let holders = try connection.statement(sql).rows(key + [id], kinds: [schema.idField.kind])
      guard let holder = holders.first?[0] else { continue }
      return CofferError.uniqueFieldsHeld(
        entity: schema.name, id: id, fields: index.fields, by: holder, store: store)
    }
    return CofferError(
      .uniqueViolation,
      "\(schema.name) \(id) breaks a unique index. Nothing in the batch was applied.", store: store,
      entity: schema.name, id: id)
  }
}
