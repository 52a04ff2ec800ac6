/// Single-value operations. Each is one atomic batch.
extension Store {
  /// Adds a value.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` if its id is stored,
  ///   ``CofferError/Code/uniqueViolation``, ``CofferError/Code/invalidValue`` (NaN),
  ///   ``CofferError/Code/valueOutOfRange``.
  public func insert<T: Storable>(_ value: T) async throws {
    try await batch(for: [T.self]) { try $0.insert(value) }
  }

  /// Adds values in one atomic batch.
  public func insert<T: Storable>(_ values: [T]) async throws {
    try await batch(for: [T.self]) { batch in for value in values { try batch.insert(value) } }
  }

  /// Replaces the stored value with the same id.
  ///
  /// - Throws: ``CofferError/Code/notFound`` if no value with its id is stored.
  public func update<T: Storable>(_ value: T) async throws {
    try await batch(for: [T.self]) { try $0.update(value) }
  }

  /// Inserts the value, or replaces the stored one with its id.
  public func upsert<T: Storable>(_ value: T) async throws {
    try await batch(for: [T.self]) { try $0.upsert(value) }
  }

  /// Removes the stored value with the value's id; nothing happens if there is none.
  public func delete<T: Storable>(_ value: T) async throws {
    try await batch(for: [T.self]) { try $0.delete(value) }
  }

  /// Removes the value of a type with an id; nothing happens if there is none.
  public func delete<T: Storable>(_ type: T.Type, id: T.ID) async throws {
    try await batch(for: [T.self]) { try $0.delete(type, id: id) }
  }

  /// Removes every value of a type that matches a filter, and returns how many were removed.
  @discardableResult
  public func deleteAll<T: Storable>(_ type: T.Type, where filter: Filter = .all) async throws -> Int {
    let summary = try await batch(for: [T.self]) { try $0.deleteAll(type, where: filter) }
    return summary.deleted
  }

  /// The value of a type with an id, or `nil`.
  public func get<T: Storable>(_ type: T.Type, id: T.ID) async throws -> T? {
    let codec = try await codec(for: type)
    let rows = try await rethrowing { try await backend.get(entity: codec.schema, ids: [id.storedValue]) }
    return try rows.first.map(codec.decode)
  }

  /// The values of a type with the given ids, in the order of `ids`, skipping missing ones.
  public func get<T: Storable>(_ type: T.Type, ids: [T.ID]) async throws -> [T] {
    let codec = try await codec(for: type)
    let rows = try await rethrowing {
      try await backend.get(entity: codec.schema, ids: ids.map(\.storedValue))
    }
    return try rows.map(codec.decode)
  }

  /// Every value of a type, ordered by id.
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
  func rethrowing<R>(_ body: () async throws -> R) async throws -> R {
    do {
      return try await body()
    } catch let error as CofferError {
      throw error.inStore(backend.name)
    }
  }
}
