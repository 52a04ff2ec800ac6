/// Operations on one value (or one list of values of a type). Each applies one atomic
/// ``ChangeSet``, checked against the schema by ``apply(_:)``.
extension Store {
  /// Adds a value.
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

  /// Adds values in one atomic batch.
  ///
  /// Each value is encoded and checked as the backend writes it, so a backend that streams
  /// rows (SQLite, LMDB) never holds a second copy of every value as rows.
  @inlinable
  public func insert<T: Storable>(_ values: [T]) async throws {
    if values.isEmpty { return }
    let codec = try await codec(for: T.self)
    let schema = codec.schema
    let rows = RowSource(count: values.count) { position in
      try QueryValidator.validate(try codec.encode(values[position]), schema: schema)
    }
    _ = try await rethrowing {
      try await backend.apply(
        ChangeSet([.insertMany(entity: schema.name, rows: rows)], layouts: schema.layouts))
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
  public func delete<T: Storable>(_ value: T) async throws {
    try await delete(T.self, id: value.id)
  }

  /// Removes the value of a type with an id; nothing happens if there is none.
  public func delete<T: Storable>(_ type: T.Type, id: T.ID) async throws {
    let codec = try await codec(for: type)
    try await apply(
      ChangeSet([.delete(entity: codec.schema.name, id: id.storedValue)], layouts: codec.schema.layouts))
  }

  /// Removes every value of a type that matches a filter, and returns how many were removed.
  @discardableResult
  public func deleteAll<T: Storable>(_ type: T.Type, where filter: Filter = .all) async throws -> Int {
    let codec = try await codec(for: type)
    return try await apply(
      ChangeSet([.deleteMatching(entity: codec.schema.name, filter: filter)], layouts: codec.schema.layouts)
    ).deleted
  }

  /// The value of a type with an id, or `nil`.
  @inlinable
  public func get<T: Storable>(_ type: T.Type, id: T.ID) async throws -> T? {
    let codec = try await codec(for: type)
    var value: T?
    try await rethrowing {
      try await backend.read(Query(lookingUp: [id.storedValue], in: codec.schema)) {
        value = try codec.decode($0)
      }
    }
    return value
  }

  /// The values of a type with the given ids, in the order of `ids`, skipping missing ones.
  @inlinable
  public func get<T: Storable>(_ type: T.Type, ids: [T.ID]) async throws -> [T] {
    let codec = try await codec(for: type)
    if ids.isEmpty { return [] }
    let stored = ids.map(\.storedValue)
    let query = Query(lookingUp: stored, in: codec.schema)
    if stored.count == 1 {
      var values: [T] = []
      try await rethrowing { try await backend.read(query) { values.append(try codec.decode($0)) } }
      return values
    }
    // Rows come in id order: decode each as it is read, then put them in the order asked.
    let idPosition = codec.schema.idPosition
    var byID: [Value: T] = [:]
    byID.reserveCapacity(stored.count)
    try await rethrowing {
      try await backend.read(query) { byID[try $0.value(at: idPosition)] = try codec.decode($0) }
    }
    return stored.compactMap { byID[$0] }
  }

  /// Every value of a type, ordered by id.
  @inlinable
  public func all<T: Storable>(_ type: T.Type) async throws -> [T] {
    try await query(type).fetch()
  }

  /// The number of stored values of a type (matching a filter).
  public func count<T: Storable>(_ type: T.Type, where filter: Filter = .all) async throws -> Int {
    try await query(type).filter(filter).count()
  }

  /// The first value of a type in a query's order, or `nil`.
  public func first<T: Storable>(_ type: T.Type, where filter: Filter = .all, sort: [Sort] = []) async throws
    -> T?
  {
    try await query(type).filter(filter).sort(sort).first()
  }

  /// Runs a backend call, adding this store's name to a ``CofferError``.
  @inlinable
  func rethrowing<R>(_ body: () async throws -> R) async throws -> R {
    do {
      return try await body()
    } catch let error as CofferError {
      throw error.inStore(backend.name)
    }
  }
}
