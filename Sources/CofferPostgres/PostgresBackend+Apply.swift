@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

extension PostgresBackend {
  /// How many times a batch runs again after a serialization failure or a deadlock.
  static let retries = 6

  /// Applies the batch in one transaction (a batch of one operation is one statement, atomic by
  /// itself); any failure rolls it all back. When the server reports a serialization failure
  /// or a deadlock, the whole batch runs again from scratch after a short random pause, a few
  /// times. A bulk insert goes in large `unnest` statements, never one round trip per row.
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try checkOpen()
    if changes.isEmpty { return ChangeSummary() }
    return try await gate.shared {
      // Read inside the gate: a schema change in this process publishes its tables before
      // leaving it.
      let known = tables.withLock { $0 }
      var attempt = 0
      while true {
        // Known at the batch's start: a batch that did not know the feed is on is refused by the
        // feed's guard, and runs again recording (below).
        let recording = feed.knownOn.withLock { $0 } ? feed : nil
        do {
          return try await pool.withConnection(while: "applying a batch", pinned: .exclusive) {
            [name] connection in
            let applier = PostgresApplier(
              connection: connection, tables: known, changes: changes, store: name, feed: recording)
            return try await Self.abandoningOnLoss(
              of: connection, watchedBy: pool.lossWatch(for: connection),
              on: pool.executor(for: connection.eventLoop), store: name
            ) { try await applier.run() }
          }
        } catch {
          if recording == nil, PostgresFailure.sqlState(of: error) == PostgresChangeFeed.refusedState {
            // Another handle turned the feed on: nothing of the batch was applied.
            feed.knownOn.withLock { $0 = true }
            continue
          }
          if let state = PostgresFailure.sqlState(of: error), PostgresFailure.retryable.contains(state),
            attempt < Self.retries
          {
            attempt += 1
            logger.debug(
              "Running a batch again after a conflict",
              metadata: ["coffer.sqlState": .string(state), "coffer.attempt": .stringConvertible(attempt)])
            try await Task.sleep(for: .milliseconds(Int.random(in: 2...10) << min(attempt, 6)))
            continue
          }
          if !changes.preconditions.isEmpty, let state = PostgresFailure.sqlState(of: error),
            PostgresFailure.retryable.contains(state)
          {
            // A conditional batch that never got through concurrent writers depends on rows they
            // kept changing: the caller reads again, as it would after a failed precondition.
            throw ChangeSet.Precondition.conflict(
              entity: changes.preconditions[0].query.entity, id: nil, store: name, what: "changed")
          }
          let entity = changes.operations.count == 1 ? changes.operations.first?.entity : nil
          throw failure.error(error, while: "applying a batch", entity: entity)
        }
      }
    }
  }
}

extension PostgresBackend {
  /// How long a batch may go on after its connection closed before the caller stops waiting.
  static let graceAfterLoss: TimeAmount = .seconds(2)

  /// Runs `work` and returns what it returns, or throws ``Coffer/CofferError/Code/unavailable``
  /// when the connection closes (`watch`, the pool's for it, hears of that) and `work` has not
  /// finished shortly after.
  ///
  /// postgres-nio 1.33.2 sometimes never completes a statement that was running when its server
  /// died, although the connection is closed (seen in about one failover or killed-server run
  /// in eight). The work runs in a task of its own so that the caller can stop waiting for it:
  /// a stuck statement then keeps only that task, never the app's call. That task prefers
  /// `executor`, the connection's event loop, like the caller, so its statements' awaits do not
  /// cross threads; it hands its result straight to the waiting caller.
  static func abandoningOnLoss<R: Sendable>(
    of connection: PostgresConnection, watchedBy watch: PostgresLossWatch, on executor: EventLoopExecutor,
    store: String, _ work: @escaping @Sendable () async throws -> R
  ) async throws -> R {
    defer { watch.disarm() }
    // The work's task once started, and whether the caller was cancelled before it was.
    let running = LockedState<(task: Task<Void, Never>?, cancelled: Bool)>((nil, false))
    return try await withTaskCancellationHandler {
      await withCheckedContinuation { continuation in
        let answer = FirstAnswer<R>(continuation)
        let task = Task(executorPreference: executor) { await answer.give(from: work) }
        let cancelled = running.withLock { running in
          running.task = task
          return running.cancelled
        }
        if cancelled { task.cancel() }
        watch.arm {
          connection.eventLoop.scheduleTask(in: graceAfterLoss) {
            answer.give(
              .failure(
                CofferError(
                  .unavailable,
                  "The connection to the server was lost while applying a batch and the batch did not finish. "
                    + "It was not acknowledged: it may or may not have been committed; check before applying it again.",
                  store: store)))
          }
        }
      }
    } onCancel: {
      let task = running.withLock { running in
        running.cancelled = true
        return running.task
      }
      task?.cancel()
    }.get()
  }
}

/// Applies the operations of one batch on one connection.
struct PostgresApplier {
  /// The most rows one `unnest` insert carries.
  static let rowsPerInsert = 4096

  let connection: PostgresConnection
  let tables: [String: PostgresTable]
  let changes: ChangeSet
  let store: String
  /// The store's change feed when the batch records it; `nil` otherwise.
  let feed: PostgresChangeFeed?
  /// What the batch changed, row by row, when it records the feed.
  let log: LockedState<ChangeCollector>?

  init(
    connection: PostgresConnection, tables: [String: PostgresTable], changes: ChangeSet, store: String,
    feed: PostgresChangeFeed? = nil
  ) {
    self.connection = connection
    self.tables = tables
    self.changes = changes
    self.store = store
    self.feed = feed
    self.log = feed == nil ? nil : LockedState(ChangeCollector())
  }

  /// One statement's worth of a batch: an operation, or a run of operations of one kind on one
  /// entity that one statement applies (rows already in the table's layout).
  enum Step {
    case operation(ChangeSet.Operation)
    case run(Run)
  }

  /// Consecutive inserts, updates, upserts or deletes of one entity, for one statement.
  struct Run {
    enum Kind { case insert, update, upsert, delete }
    var kind: Kind
    var table: PostgresTable
    /// The rows (deletes: rows of one value, the id).
    var rows: [Row]
  }

  /// The batch's operations as steps: runs of two or more operations of one kind on one entity
  /// become one statement each (an update or upsert run ends before an id it already has, so
  /// that each row's change applies to the row as the one before left it; on an entity with
  /// unique indexes, see `apply(_:to:checked:)` for when a run still goes row by row).
  func steps() throws -> [Step] {
    var steps: [Step] = []
    let operations = changes.operations
    var index = 0
    while index < operations.count {
      let operation = operations[index]
      guard let kind = Self.runKind(operation) else {
        steps.append(.operation(operation))
        index += 1
        continue
      }
      let (table, reshape) = try resolve(operation.entity)
      var rows: [Row] = []
      var ids: Set<Value> = []
      var end = index
      while end < operations.count, rows.count < Self.rowsPerInsert, Self.runKind(operations[end]) == kind,
        operations[end].entity == operation.entity
      {
        let row: Row
        switch operations[end] {
        case .insert(_, let made), .update(_, let made), .upsert(_, let made): row = reshape(made)
        case .delete(_, let id): row = Row([id])
        case .insertMany, .deleteMatching, .updateMatching: row = Row([])
        }
        let id = kind == .delete ? row[0] : row[table.schema.idPosition]
        if kind == .update || kind == .upsert, !ids.insert(id).inserted { break }
        rows.append(row)
        end += 1
      }
      if rows.count == 1 {
        steps.append(.operation(operation))
      } else {
        steps.append(.run(Run(kind: kind, table: table, rows: rows)))
      }
      index = end
    }
    return steps
  }

  private static func runKind(_ operation: ChangeSet.Operation) -> Run.Kind? {
    switch operation {
    case .insert: .insert
    case .update: .update
    case .upsert: .upsert
    case .delete: .delete
    case .insertMany, .deleteMatching, .updateMatching: nil
    }
  }

  /// Runs the batch: in a transaction unless it is one statement.
  func run() async throws -> ChangeSummary {
    if let feed, let log { return try await runRecording(feed, log) }
    do {
      if let summary = try await applyIfUnchanged() { return summary }
      if let summary = try await applyIfRowsUnchanged() { return summary }
    } catch  where PostgresFailure.sqlState(of: error) == "23505" && !connection.isClosed {
      throw try await diagnoseUniqueViolation(cause: error)
    }
    let steps = try steps()
    let guarded = !changes.preconditions.isEmpty
    let single: Bool
    switch steps.first {
    case .operation(let operation)?: single = steps.count == 1 && !isBulk(operation) && !guarded
    // An update run finds out afterwards that an id was missing: it needs a transaction to undo
    // the rows it did update. Any other run fails as a whole or not at all.
    case .run(let run)?: single = steps.count == 1 && run.kind != .update && !guarded
    case nil: single = !guarded
    }
    // A conditional batch locks the rows its preconditions are about where it can
    // (`PostgresApplier+RowLocks.swift`); else it is serializable: the server then fails it (and
    // it runs again) if a row its preconditions read is changed by a concurrent batch before it
    // commits.
    let locked = guarded ? try rowLockOrder() : nil
    let serializable = guarded && locked == nil
    if !single { try await execute(serializable ? "BEGIN ISOLATION LEVEL SERIALIZABLE" : "BEGIN") }
    if serializable { try await execute(Self.indexScansUntilCommit) }
    do {
      let summary = try await apply(steps, locked: locked)
      if !single { try await execute("COMMIT") }
      return summary
    } catch {
      // After a lost connection nothing is sent on it again: a statement enqueued on a
      // connection that is closing may never be answered. The server rolls back by itself.
      let lost = PostgresFailure.isConnectionLoss(error) || connection.isClosed
      if !single, !lost { try? await execute("ROLLBACK") }
      if PostgresFailure.sqlState(of: error) == "23505", !lost {
        throw try await diagnoseUniqueViolation(cause: error)
      }
      throw error
    }
  }

  /// Checks the batch's preconditions — under row locks, in `locked`'s order, when `locked` is
  /// not `nil` — and applies its steps.
  func apply(_ steps: [Step], locked: [ChangeSet.Precondition]?) async throws -> ChangeSummary {
    if let locked {
      for precondition in locked {
        try precondition.verify(try await selected(precondition.query, locking: true), store: store)
      }
    }
    if locked == nil { try await check(changes.preconditions) }
    var summary = ChangeSummary()
    for step in steps {
      switch step {
      case .operation(let operation): try await apply(operation, to: &summary)
      case .run(let run): try await apply(run, to: &summary)
      }
    }
    return summary
  }

  /// Makes the server plan every statement of this transaction for the values it is given and
  /// avoid sequential scans, so that a serializable batch reads a table's rows through its
  /// indexes wherever it can. A sequential scan in a serializable transaction takes a predicate
  /// lock on the whole table, so every concurrent batch that writes any row of it conflicts
  /// with this one; once statistics say a table is small (after its first `ANALYZE`, by hand
  /// or by autovacuum), the server prefers sequential scans even for lookups by id, and
  /// conditional batches on a small, busy table failed and ran again about seven times as
  /// often, halving their throughput. `SET LOCAL` ends with the transaction; a custom plan is
  /// needed because a plan cached outside this transaction may be a sequential scan.
  ///
  /// JIT compilation is turned off too: where a table has no index the filter can use, the
  /// statement still scans it sequentially, at the cost `enable_seqscan = off` adds (10^10),
  /// far above `jit_above_cost`, so the server compiled every such statement with inlining and
  /// optimization — 30 to 110 ms for a statement that runs in 0.1 ms. A cascade over a
  /// reference field without an index took minutes that way.
  static let indexScansUntilCommit =
    "SELECT set_config('enable_seqscan', 'off', true), set_config('plan_cache_mode', 'force_custom_plan', true), "
    + "set_config('jit', 'off', true)"

  /// A bulk insert runs in a transaction: it may take several statements, and a row that cannot
  /// be made fails it after the rows before it went in. An update by query reads, then writes.
  private func isBulk(_ operation: ChangeSet.Operation) -> Bool {
    switch operation {
    case .insertMany, .updateMatching: true
    default: false
    }
  }

  /// The rows a query selects now, in its order and slice and in its layout; locked against
  /// other writers until the batch ends when `locking`.
  func selected(_ query: Query, locking: Bool = false) async throws -> [Row] {
    let table = try table(query.entity)
    let idsOnly = table.readsIDsOnly(query.layout)
    var sql: String
    var binds = PostgresBindings(capacity: 1)
    if !idsOnly, let ids = query.lookedUpIDs(in: table.schema) {
      if ids.isEmpty { return [] }
      binds.append(PostgresArrayParameter(values: ids, kind: table.kinds[table.schema.idPosition]))
      sql = table.getManySQL
    } else {
      let built = try table.select(query)
      (sql, binds) = (built.sql, built.bindings)
    }
    if locking { sql += " FOR UPDATE" }
    let fields = PostgresFields(kinds: table.selectedKinds(query.layout))
    var rows: [Row] = []
    for row in try await self.query(sql, binds) {
      try fields.load(row)
      rows.append(try Row(fields))
    }
    if idsOnly { return rows }
    let reshape = try RowReshaper(reading: table.schema, as: query.layout, store: store)
    return reshape.isIdentity ? rows : rows.map { reshape($0) }
  }

  /// The rows an update by query changes, in id order: each as read and locked now, and as it
  /// will be stored, changed by the update's fields.
  private func updatedRows(_ entity: String, _ filter: Filter, _ changes: [FieldUpdate]) async throws
    -> (table: PostgresTable, read: [Row], updated: [Row])
  {
    let table = try table(entity)
    let updates = try CompiledFieldUpdates(changes, schema: table.schema)
    var query = Query(entity: entity, filter: filter)
    query.layout = table.schema
    let rows = try await selected(query, locking: true)
    return (table, rows, try rows.map { try updates.apply(to: $0, store: store) })
  }

  /// The table of an entity and the reshaper that puts the batch's rows in its layout.
  func resolve(_ entity: String) throws -> (PostgresTable, RowReshaper) {
    let table = try table(entity)
    return (table, try RowReshaper(changes.layouts[entity], storedAs: table.schema, store: store))
  }

  /// The table of an entity, or the error for one that was never prepared.
  func table(_ entity: String) throws -> PostgresTable {
    guard let table = tables[entity] else {
      throw CofferError.neverPrepared(entity, store: store, inBatch: true)
    }
    return table
  }

  private func apply(_ operation: ChangeSet.Operation, to summary: inout ChangeSummary) async throws {
    let (table, reshape) = try resolve(operation.entity)
    switch operation {
    case .insert(_, let made):
      let row = reshape(made)
      try await query(table.byID.insert, bindings(row, table))
      summary.inserted += 1
      log?.withLock { $0.stored(row, in: table.schema, existed: false) }
    case .insertMany(_, let rows):
      var start = 0
      while start < rows.count {
        let end = min(rows.count, start + Self.rowsPerInsert)
        var columns = Array(repeating: [Value](), count: table.kinds.count)
        for index in columns.indices { columns[index].reserveCapacity(end - start) }
        var made = 0
        var failure: (any Error)?
        var recorded: [Row] = []
        for position in start..<end {
          do {
            let row = reshape(try rows.row(at: position))
            for (index, value) in row.values.enumerated() { columns[index].append(value) }
            if log != nil { recorded.append(row) }
            made += 1
          } catch {
            // The rows before this one go in first: if one of them fails too, that failure
            // comes first in the batch and is the one reported.
            failure = error
            break
          }
        }
        if made > 0 {
          var binds = PostgresBindings(capacity: columns.count)
          for (index, values) in columns.enumerated() {
            binds.append(PostgresArrayParameter(values: values, kind: table.kinds[index]))
          }
          try await query(table.insertManySQL, binds)
          summary.inserted += made
          log?.withLock { log in
            for row in recorded { log.stored(row, in: table.schema, existed: false) }
          }
        }
        if let failure { throw failure }
        start = end
      }
    case .update(_, let made):
      try await update(reshape(made), in: table, to: &summary)
    case .upsert(_, let made):
      try await upsert(reshape(made), in: table, to: &summary)
    case .delete(_, let id):
      var binds = PostgresBindings(capacity: 1)
      binds.append(id, as: table.kinds[table.schema.idPosition])
      let deleted = try await query(table.byID.delete, binds).count
      summary.deleted += deleted
      if deleted > 0 { log?.withLock { $0.removed(id: id, from: table.schema) } }
    case .deleteMatching(_, let filter):
      let built = try PostgresSQL.delete(filter, in: table.layout)
      if log != nil {
        let ids = try await removedIDs(built.sql + " RETURNING \(table.idColumn)", built.bindings, table)
        summary.deleted += ids.count
        return
      }
      summary.deleted += try await counted(
        "WITH deleted AS (\(built.sql) RETURNING 1) SELECT count(*) FROM deleted", built.bindings)
    case .updateMatching(let entity, let filter, let changes):
      let (table, read, rows) = try await updatedRows(entity, filter, changes)
      if !UniqueRun.isIndependent(rows, stored: read, schema: table.schema) {
        // Row by row in id order, as every backend goes: one statement would check the unique
        // indexes in another order, and these rows take values others of them hold or held.
        for row in rows { try await update(row, in: table, to: &summary) }
        return
      }
      var start = 0
      while start < rows.count {
        let end = min(rows.count, start + Self.rowsPerInsert)
        // Checked as a whole above: the chunks need no check of their own.
        try await apply(
          Run(kind: .update, table: table, rows: Array(rows[start..<end])), to: &summary, checked: true)
        start = end
      }
    }
  }

  /// Updates one row, already in the table's layout.
  private func update(_ row: Row, in table: PostgresTable, to summary: inout ChangeSummary) async throws {
    let rows = try await query(table.byID.update, bindings(row, table))
    guard !rows.isEmpty else {
      let id = row[table.schema.idPosition]
      throw CofferError.nothingToUpdate(entity: table.schema.name, id: id, store: store)
    }
    summary.updated += 1
    log?.withLock { $0.stored(row, in: table.schema, existed: true) }
  }

  /// Upserts one row, already in the table's layout.
  private func upsert(_ row: Row, in table: PostgresTable, to summary: inout ChangeSummary) async throws {
    let rows = try await query(table.upsertSQL, bindings(row, table))
    if let cell = rows.first?.first(where: { _ in true }),
      case .bool(true) = try PostgresValues.read(cell.bytes, as: .bool)
    {
      summary.inserted += 1
      log?.withLock { $0.stored(row, in: table.schema, existed: false) }
    } else {
      summary.updated += 1
      log?.withLock { $0.stored(row, in: table.schema, existed: true) }
    }
  }

  /// Applies a run of operations in one statement, its rows bound as one array per column.
  ///
  /// A run of updates or upserts of an entity with unique indexes asks the server whether any
  /// stored row it replaces holds unique values another row of the run takes
  /// (``PostgresTable/uniqueClashSQL``): a run of updates in its own statement, which then
  /// changes nothing (``PostgresTable/updateManyUnlessClashSQL``), a run of upserts in one
  /// statement more, answering one number. PostgreSQL checks a unique index row by row as one
  /// statement changes them, in no set order, so when a row of the run takes unique values that
  /// another row of the run holds before or after it, one statement could fail where the
  /// changes one after another succeed (or the other way round): such a run goes row by row, in
  /// the batch's order. Any other run gives, in one statement, what the changes one after
  /// another give — a clash with a row outside the run fails it either way, and is named by
  /// replaying the batch (``diagnoseUniqueViolation(cause:)``). `checked` says the caller
  /// already made sure of that.
  private func apply(_ run: Run, to summary: inout ChangeSummary, checked: Bool = false) async throws {
    let table = run.table
    var binds = PostgresBindings(capacity: table.kinds.count)
    if run.kind == .delete {
      binds.append(
        PostgresArrayParameter(values: run.rows.map { $0[0] }, kind: table.kinds[table.schema.idPosition]))
      if log != nil {
        summary.deleted += try await removedIDs(table.deleteManyReturningSQL, binds, table).count
        return
      }
      summary.deleted += try await counted(table.deleteManySQL, binds)
      return
    }
    for (index, kind) in table.kinds.enumerated() {
      binds.append(PostgresArrayParameter(values: run.rows.map { $0[index] }, kind: kind))
    }
    var guarded = false
    if !checked, run.kind == .update || run.kind == .upsert, let clashSQL = table.uniqueClashSQL {
      // The run's own keys here, the stored rows' on the server: no stored row comes back. A
      // run of updates asks in its own statement, which then changes nothing on a clash.
      var independent = UniqueRun.takesDistinctKeys(run.rows, schema: table.schema)
      if independent, run.kind == .update {
        guarded = true
      } else if independent {
        independent = try await counted(clashSQL, binds) == 0
      }
      if !independent {
        try await applyRowByRow(run, to: &summary)
        return
      }
    }
    switch run.kind {
    case .insert:
      try await query(table.insertManySQL, binds)
      summary.inserted += run.rows.count
      log?.withLock { log in
        for row in run.rows { log.stored(row, in: table.schema, existed: false) }
      }
    case .update:
      let updated = try await counted(
        guarded ? table.updateManyUnlessClashSQL ?? table.updateManySQL : table.updateManySQL, binds)
      if updated == 0, guarded, let clashSQL = table.uniqueClashSQL, try await counted(clashSQL, binds) > 0 {
        try await applyRowByRow(run, to: &summary)
        return
      }
      if updated < run.rows.count {
        // The first row in the batch's order that found nothing to update is the failure.
        let ids = run.rows.map { $0[table.schema.idPosition] }
        var idBinds = PostgresBindings(capacity: 1)
        idBinds.append(PostgresArrayParameter(values: ids, kind: table.kinds[table.schema.idPosition]))
        var found: Set<Value> = []
        for row in try await query(table.storedIDsSQL, idBinds) {
          if let cell = row.first(where: { _ in true }) {
            found.insert(try PostgresValues.read(cell.bytes, as: table.kinds[table.schema.idPosition]))
          }
        }
        let missing = ids.first { !found.contains($0) } ?? .null
        throw CofferError.nothingToUpdate(entity: table.schema.name, id: missing, store: store)
      }
      summary.updated += run.rows.count
      log?.withLock { log in
        for row in run.rows { log.stored(row, in: table.schema, existed: true) }
      }
    case .upsert:
      if log != nil {
        try await upsertRecording(run.rows, binds, table, to: &summary)
        return
      }
      let rows = try await query(table.upsertManySQL, binds)
      var inserted = 0
      for row in rows {
        if let cell = row.first(where: { _ in true }),
          case .bool(true) = try PostgresValues.read(cell.bytes, as: .bool)
        {
          inserted += 1
        }
      }
      summary.inserted += inserted
      summary.updated += run.rows.count - inserted
    case .delete:
      break
    }
  }

  /// A run of updates or upserts one statement per row, in the batch's order.
  private func applyRowByRow(_ run: Run, to summary: inout ChangeSummary) async throws {
    for row in run.rows {
      if run.kind == .update {
        try await update(row, in: run.table, to: &summary)
      } else {
        try await upsert(row, in: run.table, to: &summary)
      }
    }
  }

  func bindings(_ row: Row, _ table: PostgresTable) -> PostgresBindings {
    var binds = PostgresBindings(capacity: table.kinds.count)
    for (index, value) in row.values.enumerated() { binds.append(value, as: table.kinds[index]) }
    return binds
  }

  /// Runs a statement of the batch, prepared once per connection and shape.
  @discardableResult
  func query(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) async throws
    -> [PostgresRow]
  {
    try await PostgresStatements.rows(sql, binds, on: connection, logger: .disabled)
  }

  /// Runs a transaction-control statement (`BEGIN`, `SAVEPOINT`, …), which cannot be prepared.
  func execute(_ sql: String) async throws {
    _ = try await connection.send(PostgresQuery(unsafeSQL: sql), logger: .disabled).collect()
  }

  // MARK: - Naming the row a failed batch is about

  /// Runs the batch again, each operation behind a savepoint, up to the operation that breaks a
  /// unique constraint, and returns the error every backend gives for it: a duplicate id, or
  /// the unique fields and the row that already holds their values. Rolls everything back.
  func diagnoseUniqueViolation(cause: any Error) async throws -> CofferError {
    try await execute("BEGIN")
    do {
      for operation in changes.operations {
        let (table, reshape) = try resolve(operation.entity)
        let rows: RowSource
        switch operation {
        case .insert(_, let row), .update(_, let row), .upsert(_, let row):
          rows = RowSource(count: 1) { _ in row }
        case .insertMany(_, let source): rows = source
        case .updateMatching(let entity, let filter, let changes):
          let updated = try await updatedRows(entity, filter, changes).updated
          rows = RowSource(count: updated.count) { updated[$0] }
        case .delete, .deleteMatching:
          var ignored = ChangeSummary()
          try await apply(operation, to: &ignored)
          continue
        }
        for position in 0..<rows.count {
          // Made one at a time: a row that cannot be made fails only after the rows before it.
          let row = try rows.row(at: position)
          try await execute("SAVEPOINT coffer_row")
          do {
            var ignored = ChangeSummary()
            switch operation {
            case .update, .updateMatching:
              try await apply(.update(entity: operation.entity, row: row), to: &ignored)
            case .upsert: try await apply(.upsert(entity: operation.entity, row: row), to: &ignored)
            default: try await apply(.insert(entity: operation.entity, row: row), to: &ignored)
            }
            try await execute("RELEASE SAVEPOINT coffer_row")
          } catch  where PostgresFailure.sqlState(of: error) == "23505" {
            try await execute("ROLLBACK TO SAVEPOINT coffer_row")
            let error = try await explain(reshape(row), in: table, inserting: isInsert(operation))
            try await execute("ROLLBACK")
            return error
          }
        }
      }
    } catch {
      if !PostgresFailure.isConnectionLoss(error), !connection.isClosed { try? await execute("ROLLBACK") }
      throw error
    }
    try await execute("ROLLBACK")
    // Another writer changed the rows meanwhile; say what the server said.
    return CofferError(
      .uniqueViolation,
      "A row of the batch broke a unique index or repeated a stored id. Nothing in the batch was applied.",
      store: store,
      underlying: PostgresFailure.sqlState(of: cause).map { PostgresServerError(sqlState: $0, message: nil) })
  }

  private func isInsert(_ operation: ChangeSet.Operation) -> Bool {
    switch operation {
    case .insert, .insertMany: true
    default: false
    }
  }

  /// The error for a row that broke a unique constraint, inside the batch's transaction.
  func explain(_ row: Row, in table: PostgresTable, inserting: Bool) async throws -> CofferError {
    let schema = table.schema
    let id = row[schema.idPosition]
    let idKind = table.kinds[schema.idPosition]
    if inserting {
      var binds = PostgresBindings(capacity: 1)
      binds.append(id, as: idKind)
      if try await !query(table.existsSQL, binds).isEmpty {
        return CofferError.idAlreadyStored(entity: schema.name, id: id, store: store)
      }
    }
    for index in schema.uniqueIndexes {
      let positions = index.fields.compactMap { schema.position(of: $0) }
      let key = positions.map { row[$0] }
      if key.contains(where: \.isNull) { continue }
      var binds = PostgresBindings(capacity: positions.count + 1)
      var conditions: [String] = []
      for position in positions {
        binds.append(row[position], as: table.kinds[position])
        conditions.append("\(table.columns[position]) = $\(binds.count)")
      }
      binds.append(id, as: idKind)
      let sql =
        "SELECT \(table.idColumn) FROM \(table.table) WHERE \(conditions.joined(separator: " AND ")) "
        + "AND \(table.idColumn) <> $\(binds.count) ORDER BY \(table.idColumn) LIMIT 1"
      guard let cell = try await query(sql, binds).first?.first(where: { _ in true }) else { continue }
      let holder = try PostgresValues.read(cell.bytes, as: idKind)
      return CofferError.uniqueFieldsHeld(
        entity: schema.name, id: id, fields: index.fields, by: holder, store: store)
    }
    return CofferError(
      .uniqueViolation, "\(schema.name) \(id) breaks a unique index. Nothing in the batch was applied.",
      store: store, entity: schema.name, id: id)
  }
}
