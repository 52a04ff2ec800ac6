import Logging

/// The reads and buffered writes of one run of a ``Store/transaction(retries:_:)`` body.
///
/// Reads go to the store and are remembered; writes wait in the transaction. At the end the
/// writes are applied as one batch on the condition that everything read is still as it was
/// read (see ``ChangeSet/Precondition``): if another writer changed it in between, nothing is
/// applied and the body runs again on fresh reads.
///
/// ```swift
/// try await store.transaction { tx in
///   guard var from = try await tx.get(Account.self, id: a),
///     var to = try await tx.get(Account.self, id: b)
///   else { throw TransferError.noSuchAccount }
///   from.balance -= 10
///   to.balance += 10
///   try tx.update(from)
///   try tx.update(to)
/// }
/// ```
///
/// `get` sees the transaction's own writes; a query (``query(_:)``) reads the store as
/// committed, without them. Every value and row a query returned, and the number a count
/// returned, must be unchanged at commit, so a row that another writer adds to a query's
/// result is a conflict too.
///
/// Use it only inside the body that received it: it applies nothing after the body returns.
public final class StoreTransaction: Sendable {
  /// The store the transaction reads and writes.
  public let store: Store

  struct State: Sendable {
    var batch: Batch
    /// The rows read by id, by entity and id (`nil`: read as absent), with the schema they were
    /// read in: each becomes a precondition.
    var reads: [String: (schema: EntitySchema, rows: [Value: Row?])] = [:]
    /// What queries and counts selected.
    var queries: [ChangeSet.Precondition] = []
    /// The rows the transaction wrote by id (`nil`: deleted), in the layout of the entity's
    /// codec, so that `get` sees them.
    var written: [String: [Value: Row?]] = [:]
    /// Filters of deletes by query, by entity: a stored row that matches one is gone for `get`.
    var sweeps: [String: [CompiledFilter]] = [:]
    var isFinished = false
  }

  let state: LockedState<State>

  init(store: Store) {
    self.store = store
    self.state = LockedState(State(batch: Batch(codecs: store.prepared.withLock { $0.codecs })))
  }

  // MARK: - Reading

  /// The stored value of a type with an id as this transaction sees it (its own writes
  /// included), or `nil`; the value read must be unchanged when the transaction commits.
  public func get<T: Storable>(_ type: T.Type, id: T.ID) async throws -> T? {
    let codec = try await store.codec(for: type)
    let entity = codec.schema.name
    let key = id.storedValue
    if let written = state.withLock({ $0.written[entity]?[key] }) {
      return try written.map { try codec.decode($0) }
    }
    var row = try await committedRow(entity: entity, id: key, schema: codec.schema)
    if let found = row, state.withLock({ $0.sweeps[entity]?.contains { $0.matches(found) } ?? false }) {
      row = nil
    }
    return try row.map { try codec.decode($0) }
  }

  /// The stored values of a type with the given ids, in the order of `ids`, skipping ids that
  /// are not stored, as ``get(_:id:)`` sees each.
  public func get<T: Storable>(_ type: T.Type, ids: [T.ID]) async throws -> [T] {
    var values: [T] = []
    values.reserveCapacity(ids.count)
    for id in ids {
      if let value = try await get(type, id: id) { values.append(value) }
    }
    return values
  }

  /// A query over the values of a type, run on the store as committed (without this
  /// transaction's writes); what it returns, or the number it counts, must be unchanged when
  /// the transaction commits. ``StoreQuery/delete()`` and ``StoreQuery/update(_:)`` on it are
  /// buffered in the transaction.
  public func query<T: Storable>(_ type: T.Type) -> StoreQuery<T> {
    var query = StoreQuery<T>(store: store)
    query.source = .transaction(self)
    return query
  }

  /// Reads the row with an id as committed, remembering it the first time.
  private func committedRow(entity: String, id: Value, schema: EntitySchema) async throws -> Row? {
    if let read = state.withLock({ $0.reads[entity]?.rows[id] }) { return read }
    var found: Row?
    try await store.readInTurn(.get, entity) {
      try await store.backend.read(Query(lookingUp: id, in: schema)) { found = try Row($0) }
    }
    state.withLock { state in
      if state.reads[entity] == nil { state.reads[entity] = (schema, [:]) }
      if state.reads[entity]?.rows[id] == nil { state.reads[entity]?.rows[id] = .some(found) }
    }
    return found
  }

  /// Runs a checked query on the store, remembering what it selected. Its callers (a query's
  /// read, an aggregate) have already taken the read's turn (see ``ReadTurns``).
  func read(_ checked: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    var rows: [Row] = []
    try await store.rethrowing { try await store.backend.read(checked) { rows.append(try Row($0)) } }
    state.withLock { $0.queries.append(ChangeSet.Precondition(checked, .rows(rows))) }
    try RowFields.handOver(rows, to: visit)
  }

  /// Counts a checked query's filter on the store, remembering the number.
  func count(_ whole: Query) async throws -> Int {
    let total = try await store.readInTurn(.count, whole.entity) { try await store.backend.count(whole) }
    state.withLock { $0.queries.append(ChangeSet.Precondition(whole, .count(total))) }
    return total
  }

  // MARK: - Writing

  /// Adds an insert, applied when the transaction commits.
  public func insert<T: Storable>(_ value: T) throws {
    try write { try $0.insert(value) }
  }

  /// Adds inserts of several values, applied when the transaction commits.
  public func insert<T: Storable>(_ values: [T]) throws {
    for value in values { try insert(value) }
  }

  /// Adds an update, applied when the transaction commits.
  public func update<T: Storable>(_ value: T) throws {
    try write { try $0.update(value) }
  }

  /// Adds an upsert, applied when the transaction commits.
  public func upsert<T: Storable>(_ value: T) throws {
    try write { try $0.upsert(value) }
  }

  /// Adds a delete of the stored value with the value's id.
  public func delete<T: Storable>(_ value: T) throws {
    try delete(T.self, id: value.id)
  }

  /// Adds a delete by id, applied when the transaction commits.
  public func delete<T: Storable>(_ type: T.Type, id: T.ID) throws {
    try write { try $0.delete(type, id: id) }
  }

  /// Adds an operation made elsewhere (a delete or update by query) to the batch.
  func write(_ operation: ChangeSet.Operation, layout: EntitySchema) throws {
    try write { $0.append(operation, layout: layout) }
  }

  /// Adds to the batch through `add` and notes what its new operation does to rows by id.
  private func write(_ add: (inout Batch) throws -> Void) throws {
    try state.withLock { state in
      guard !state.isFinished else {
        throw CofferError(
          .invalidQuery,
          "This transaction has ended; write through the transaction its body was given, inside the body.",
          store: store.backend.name)
      }
      try add(&state.batch)
      guard let operation = state.batch.changes.operations.last else { return }
      let entity = operation.entity
      guard let layout = state.batch.changes.layouts[entity] else { return }
      switch operation {
      case .insert(_, let row), .update(_, let row), .upsert(_, let row):
        state.written[entity, default: [:]][row[layout.idPosition]] = .some(row)
      case .delete(_, let id):
        state.written[entity, default: [:]][id] = .some(nil)
      case .deleteMatching(_, let filter):
        let compiled = try CompiledFilter(filter, schema: layout)
        state.sweeps[entity, default: []].append(compiled)
        state.written[entity] = state.written[entity]?.mapValues { row in
          row.flatMap { compiled.matches($0) ? nil : $0 }
        }
      case .updateMatching, .insertMany:
        // Changed inside the backend: `get` cannot know the result, so it reads again.
        state.written[entity] = nil
      }
    }
  }

  // MARK: - Committing

  /// Applies the buffered writes on the condition that what was read is unchanged. A
  /// transaction that only read still checks that, so its reads were of one state.
  func commit() async throws {
    let (batch, preconditions) = state.withLock { state in
      state.isFinished = true
      var preconditions = state.queries
      for (_, read) in state.reads.sorted(by: { $0.key < $1.key }) {
        let schema = read.schema
        let ids = read.rows.keys.sorted { ValueOrder.compare($0, $1) < 0 }
        let rows = ids.compactMap { read.rows[$0] ?? nil }
        let query = ids.count == 1 ? Query(lookingUp: ids[0], in: schema) : Query(lookingUp: ids, in: schema)
        preconditions.append(ChangeSet.Precondition(query, .rows(rows)))
      }
      return (state.batch, preconditions)
    }
    var changes = batch.changes
    changes.preconditions = preconditions
    if changes.isEmpty { return }
    for key in batch.unprepared {
      if let box = batch.codecs[key] { try await store.adopt(box, for: key) }
    }
    // The preconditions are made here of checked queries and rows read from the store.
    try await store.apply(changes, preconditionsChecked: true)
  }
}

extension Store {
  /// The most times ``transaction(retries:_:)`` and ``modify(_:id:retries:_:)`` run their body
  /// again after a conflict, by default.
  public static let defaultRetries = 16

  /// Runs `body`, which reads through the transaction it is given and buffers writes in it,
  /// then applies the writes as one atomic batch — on the condition that nothing the body read
  /// was changed by another writer meanwhile. When something was, nothing is applied and
  /// `body` runs again on fresh reads, after a short random pause, up to `retries` times.
  ///
  /// ```swift
  /// try await store.transaction { tx in
  ///   guard var thread = try await tx.get(ChatThread.self, id: threadID) else { return }
  ///   thread.unread = try await tx.query(Message.self)
  ///     .filter(\.threadID == threadID && \.readAt == nil).count()
  ///   try tx.update(thread)
  /// }
  /// ```
  ///
  /// No backend lock is held while `body` runs, so `body` may await anything; it must not
  /// assume it runs once (keep side effects for after the call). A backend may hold a
  /// connection for the attempt (PostgreSQL does, for speed), so keep `body` short. Concurrency control is
  /// optimistic: see Docs/Concurrency.md. Transactions of this store that conflicted run their
  /// retries one at a time, in order, and a new one waits for those ahead of it before it runs
  /// (beside the other new ones), so that under contention every transaction gets through.
  ///
  /// - Returns: what the last run of `body` returned.
  /// - Throws: what `body` threw (nothing is applied, and it does not run again);
  ///   ``CofferError/Code/conflict`` when it still conflicted after `retries` runs again; or the
  ///   batch's error (``CofferError/Code/duplicateID``, ``CofferError/Code/notFound``, …).
  public func transaction<R>(
    retries: Int = Store.defaultRetries, _ body: (StoreTransaction) async throws -> R
  ) async throws -> R {
    try await retrying(retries: retries) {
      try await hosted {
        let transaction = StoreTransaction(store: self)
        let result = try await body(transaction)
        return try await Attempt.committing(result) { try await transaction.commit() }
      }
    }
  }

  /// Runs one attempt of a transaction where the backend hosts it (see ``TransactionHosting``),
  /// or as it is.
  private func hosted<R>(_ attempt: () async throws -> R) async throws -> R {
    guard let host = backend as? any TransactionHosting else { return try await attempt() }
    return try await host.hostTransaction(attempt)
  }

  /// Changes the stored value of a type with an id without losing a concurrent update: reads
  /// it, lets `change` change it, and writes it back only if no other writer changed it
  /// meanwhile — otherwise reads it again and runs `change` again (see ``transaction(retries:_:)``).
  /// A backend that can (the in-memory store) reads and writes in one step under its writer
  /// lock instead: `change` then runs once, holding that lock, so keep it short.
  ///
  /// ```swift
  /// try await store.modify(Account.self, id: a) { $0.balance -= 10 }
  /// ```
  ///
  /// - Returns: the value as stored.
  /// - Throws: ``CofferError/Code/notFound`` when no value has the id; what `change` threw;
  ///   ``CofferError/Code/conflict`` after `retries` runs again.
  @discardableResult
  public func modify<T: Storable>(
    _ type: T.Type, id: T.ID, retries: Int = Store.defaultRetries, _ change: (inout T) throws -> Void
  ) async throws -> T {
    let codec = try await codec(for: type)
    let key = id.storedValue
    if let modified = try await modifiedInPlace(codec, id: key, change) { return modified }
    // One value: the transaction's bookkeeping is one row and one precondition.
    return try await retrying(retries: retries) {
      try await hosted {
        var stored: Row?
        try await readInTurn {
          try await backend.read(Query(lookingUp: key, in: codec.schema)) { stored = try Row($0) }
        }
        guard let stored else { throw nothingToModify(T.self, id: key) }
        var value = try codec.decode(stored)
        try change(&value)
        let changes = ChangeSet(
          [.update(entity: codec.schema.name, row: try codec.encode(value))], layouts: codec.schema.layouts,
          preconditions: [.unchanged(stored, in: codec.schema)])
        return try await Attempt.committing(value) { try await apply(changes, preconditionsChecked: true) }
      }
    }
  }

  /// ``modify(_:id:retries:_:)`` done by the backend in one step (see
  /// ``InPlaceModifying/modifyInPlace(_:id:_:)``), or `nil` when the backend leaves it to the
  /// store, or the entity keeps references (a changed reference is checked as a batch's is).
  private func modifiedInPlace<T: Storable>(
    _ codec: RowCodec<T>, id key: Value, _ change: (inout T) throws -> Void
  ) async throws -> T? {
    guard let backend = backend as? any InPlaceModifying else { return nil }
    if try await keepsReferences(codec.schema.name) { return nil }
    var modified: T?
    do {
      let done = try await backend.modifyInPlace(codec.schema, id: key) { stored in
        guard let stored else { throw nothingToModify(T.self, id: key) }
        var value = try codec.decode(stored)
        do {
          try change(&value)
        } catch {
          throw ChangeFailed(error: error)
        }
        let row = try QueryValidator.validate(try codec.encode(value), schema: codec.schema)
        modified = value
        return row
      }
      guard done else { return nil }
    } catch let failed as ChangeFailed {
      throw failed.error
    } catch let error as CofferError {
      let named = error.inStore(backend.name)
      logRefused(named)
      throw named
    }
    logApplied(operations: 1, ChangeSummary(updated: 1))
    notifyObservers(ofChangesTo: codec.schema.name)
    return modified
  }

  /// An error thrown by the `change` of ``modify(_:id:retries:_:)``, carried out of the backend
  /// so that it comes out as it was thrown.
  private struct ChangeFailed: Error {
    let error: any Error
  }

  /// The error for ``modify(_:id:retries:_:)`` of an id that is not stored.
  private func nothingToModify<T: Storable>(_ type: T.Type, id: Value) -> CofferError {
    CofferError(
      .notFound, "There is no \(T.entityName) with id \(id) to modify. Insert it first.",
      store: backend.name, entity: T.entityName, id: id)
  }

  /// How one run of a transaction ended, when its body did not throw.
  enum Attempt<R> {
    case committed(R)
    case conflicted(CofferError)

    /// `result` once `commit` succeeds; the conflict when it fails with one.
    static func committing(_ result: R, _ commit: () async throws -> Void) async throws -> Attempt {
      do {
        try await commit()
        return .committed(result)
      } catch let error as CofferError where error.code == .conflict {
        return .conflicted(error)
      }
    }
  }

  /// Runs `attempt` until it commits: freely at first; after a conflict, in turn with this
  /// store's other transactions that conflicted (see ``TransactionGate``).
  private func retrying<R>(retries: Int, _ attempt: () async throws -> Attempt<R>) async throws -> R {
    // Nested in a transaction that holds the gate: run freely, or wait for ourselves forever.
    if TransactionGate.isHeld { return try await attempts(retries: retries, attempt) }
    // Behind the transactions of this store that conflicted and wait or retry, then freely.
    if gate.isContended { await gate.pass() }
    switch try await attempt() {
    case .committed(let result): return result
    case .conflicted(let error):
      if retries == 0 { throw error }
      telemetry?.countRetry(entity: error.entity)
    }
    return try await inTurn(retries: retries - 1, attempt)
  }

  /// Runs attempts holding the store's ``TransactionGate``.
  private func inTurn<R>(
    retries: Int, _ attempt: () async throws -> Attempt<R>, isolation: isolated (any Actor)? = #isolation
  ) async throws -> R {
    await gate.acquire()
    defer { gate.release() }
    // Captures the caller's isolation so that the attempts run where the caller runs (see
    // `StoreTelemetry.run`).
    return try await TransactionGate.$isHeld.withValue(
      true,
      operation: {
        _ = isolation
        return try await attempts(retries: retries, attempt)
      }, isolation: isolation)
  }

  /// Runs `attempt` until it commits, at most `retries` times again after conflicts, pausing
  /// a little longer before each.
  private func attempts<R>(retries: Int, _ attempt: () async throws -> Attempt<R>) async throws -> R {
    var count = 0
    while true {
      switch try await attempt() {
      case .committed(let result): return result
      case .conflicted(let error):
        guard count < retries else { throw error }
        count += 1
        telemetry?.countRetry(entity: error.entity)
        logger.debug(
          "Running a transaction again after a conflict",
          metadata: [
            "coffer.entity": .string(error.entity ?? ""), "coffer.attempt": .stringConvertible(count),
          ])
        try await Task.sleep(for: Self.pause(before: count))
      }
    }
  }

  /// A random pause before running a transaction again, growing with each attempt (at most
  /// about 50 ms), so that writers that conflicted do not meet again at once.
  static func pause(before attempt: Int) -> Duration {
    .microseconds(Int.random(in: 0...(50 << min(attempt, 10))))
  }
}
