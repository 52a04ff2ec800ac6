/// Operations on one value (or one list of values of a type). Each applies one atomic
/// ``ChangeSet``, checked against the schema by ``apply(_:)``.
extension Store {
  /// Adds a value. It returns nothing: the value you passed is what is stored (its id
  /// included), so keep using it.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` if its id is stored,
  ///   ``CofferError/Code/uniqueViolation``, ``CofferError/Code/invalidValue`` (NaN),
  ///   ``CofferError/Code/valueOutOfRange``.
  public func insert<T: Storable>(_ value: T) async throws {
    let codec = try await codec(for: T.self)
    try await apply(
      ChangeSet(
        [.insert(entity: codec.schema.name, row: try codec.encode(value))], layouts: codec.schema.layouts))
  }

  /// Adds values in one atomic batch: all of them, or none when one fails. An empty array does
  /// nothing. It returns nothing; count them with
  /// ``StoreQuery/count()`` or read them back when you need to.
  ///
  /// Each value is encoded and checked as the backend writes it, so a backend that streams
  /// rows (SQLite, LMDB) never holds a second copy of every value as rows.
  ///
  /// - Throws: the error of the first value that fails, with nothing inserted: the errors of
  ///   ``insert(_:)-(T)``, including ``CofferError/Code/duplicateID`` for an id that is stored or
  ///   appears twice in `values`.
  @inlinable
  public func insert<T: Storable>(_ values: [T]) async throws {
    if values.isEmpty { return }
    let codec = try await codec(for: T.self)
    let schema = codec.schema
    try await insertRows(count: values.count, into: schema) { position in
      try QueryValidator.validate(try codec.encode(values[position]), schema: schema)
    }
  }

  /// Inserts the rows `make` gives for positions `0 ..< count` as one batch: the body of
  /// ``insert(_:)-([T])`` past its generic encoding.
  @usableFromInline
  func insertRows(count: Int, into schema: EntitySchema, _ make: @Sendable @escaping (Int) throws -> Row)
    async throws
  {
    let changes = ChangeSet(
      [.insertMany(entity: schema.name, rows: RowSource(count: count, make))], layouts: schema.layouts)
    if try await keepsReferences(schema.name) {
      try await apply(changes)
      return
    }
    _ = try await logged(operations: 1, entity: schema.name) {
      try await rethrowing { try await backendApply(changes) }
    }
    notifyObservers(ofChangesTo: schema.name)
  }

  /// Replaces the stored value with the same id.
  ///
  /// - Throws: ``CofferError/Code/notFound`` if no value with its id is stored.
  public func update<T: Storable>(_ value: T) async throws {
    let codec = try await codec(for: T.self)
    try await apply(
      ChangeSet(
        [.update(entity: codec.schema.name, row: try codec.encode(value))], layouts: codec.schema.layouts))
  }

  /// Inserts the value, or replaces the stored one with its id.
  public func upsert<T: Storable>(_ value: T) async throws {
    let codec = try await codec(for: T.self)
    try await apply(
      ChangeSet(
        [.upsert(entity: codec.schema.name, row: try codec.encode(value))], layouts: codec.schema.layouts))
  }

  /// Removes the stored value with the value's id; nothing happens if there is none.
  ///
  /// - Returns: Whether a stored value was removed (`false` when none had the id).
  @discardableResult
  public func delete<T: Storable>(_ value: T) async throws -> Bool {
    try await delete(T.self, id: value.id)
  }

  /// Removes the value of a type with an id; nothing happens if there is none.
  ///
  /// ```swift
  /// if try await store.delete(Message.self, id: 42) { print("removed") }
  /// ```
  ///
  /// - Returns: Whether a stored value was removed (`false` when none had the id). Rows that
  ///   delete rules removed with it do not change the answer.
  @discardableResult
  public func delete<T: Storable>(_ type: T.Type, id: T.ID) async throws -> Bool {
    let codec = try await codec(for: type)
    let summary = try await apply(
      ChangeSet([.delete(entity: codec.schema.name, id: id.storedValue)], layouts: codec.schema.layouts))
    return summary.deleted > 0
  }

  /// Reads one value by id.
  ///
  /// - Returns: the stored value of the type with this id, or `nil` when there is none.
  @inlinable
  public func get<T: Storable>(_ type: T.Type, id: T.ID) async throws -> T? {
    let codec = try await codec(for: type)
    var value: T?
    try await readRow(id: id.storedValue, in: codec.schema) { value = try codec.decode($0) }
    return value
  }

  /// Reads several values by id in one call.
  ///
  /// ```swift
  /// let messages = try await store.get(Message.self, ids: [3, 1, 99])  // [#3, #1]: 99 is not stored
  /// ```
  ///
  /// - Returns: the stored values with the given ids, in the order of `ids`; an id that is not
  ///   stored is skipped, so the array may be shorter than `ids`.
  @inlinable
  public func get<T: Storable>(_ type: T.Type, ids: [T.ID]) async throws -> [T] {
    let codec = try await codec(for: type)
    if ids.isEmpty { return [] }
    let stored = ids.map(\.storedValue)
    if stored.count == 1 {
      var values: [T] = []
      try await readRows(ids: stored, in: codec.schema) { values.append(try codec.decode($0)) }
      return values
    }
    // Rows come in id order: decode each as it is read, then put them in the order asked.
    let idPosition = codec.schema.idPosition
    var byID: [Value: T] = [:]
    byID.reserveCapacity(stored.count)
    try await readRows(ids: stored, in: codec.schema) {
      byID[try $0.value(at: idPosition)] = try codec.decode($0)
    }
    return stored.compactMap { byID[$0] }
  }

  /// Reads every stored value of a type.
  ///
  /// - Returns: all the values, ordered by id ascending; an empty array when there are none.
  @inlinable
  public func all<T: Storable>(_ type: T.Type) async throws -> [T] {
    try await query(type).fetch()
  }

  /// Runs a backend read: first lets other tasks have the thread when the store's reads have
  /// kept it for a while (see ``ReadTurns``), then adds this store's name to a ``CofferError``.
  @inlinable
  func readInTurn<R>(_ body: () async throws -> R) async throws -> R {
    await turns.take()
    return try await rethrowing(body)
  }

  /// ``readInTurn(_:)-(()->R)`` measured as one `operation` on `entity` (see ``StoreTelemetry``):
  /// with no telemetry, one test of `nil` more.
  @inlinable
  func readInTurn<R>(_ operation: StoreOperation, _ entity: String, _ body: () async throws -> R)
    async throws -> R
  {
    await turns.take()
    guard let telemetry else { return try await rethrowing(body) }
    return try await telemetry.observe(operation, entity: entity) { try await rethrowing(body) }
  }

  /// Runs a call measured as one `operation` (see ``StoreTelemetry``); with no telemetry, runs it.
  /// A server answering for the store measures its reads of the backend with it.
  @discardableResult
  @inlinable
  package func observed<R>(_ operation: StoreOperation, entity: String?, _ body: () async throws -> R)
    async throws -> R
  {
    guard let telemetry else { return try await body() }
    return try await telemetry.observe(operation, entity: entity, body)
  }

  /// Runs a backend call, adding this store's name to a ``CofferError``.
  @inlinable
  package func rethrowing<R>(_ body: () async throws -> R) async throws -> R {
    do {
      return try await body()
    } catch let error as CofferError {
      throw error.inStore(backendName)
    }
  }
}
