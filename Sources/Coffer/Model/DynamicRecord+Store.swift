import Foundation

/// Keeping ``DynamicRecord``s in a store, through the row API.
extension Store {
  /// Prepares the entities of dynamic records (creating or evolving their storage).
  public func prepare(_ entities: [DynamicEntity]) async throws {
    try await prepare(schemas: entities.map(\.schema))
  }

  /// Adds a record. A new record of an entity with a UUID id gets a fresh id, returned.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` if its id is stored, or
  ///   ``CofferError/Code/invalidValue`` for a new record whose id cannot be generated.
  @discardableResult
  public func insert(_ record: DynamicRecord) async throws -> DynamicRecord {
    var record = record
    if record.isNew, record.entity.schema.idField.kind == .uuid {
      try record.set(record.entity.idAttribute, Value.uuid(UUID()))
    }
    try await apply(
      ChangeSet(
        [.insert(entity: record.entity.name, row: try await rowPreparing(record))],
        layouts: record.entity.schema.layouts))
    return record
  }

  /// Replaces the stored record with the same id.
  ///
  /// - Throws: ``CofferError/Code/notFound`` if no record with its id is stored.
  public func update(_ record: DynamicRecord) async throws {
    try await apply(
      ChangeSet(
        [.update(entity: record.entity.name, row: try await rowPreparing(record))],
        layouts: record.entity.schema.layouts))
  }

  /// Inserts the record, or replaces the stored one with its id.
  public func upsert(_ record: DynamicRecord) async throws {
    try await apply(
      ChangeSet(
        [.upsert(entity: record.entity.name, row: try await rowPreparing(record))],
        layouts: record.entity.schema.layouts))
  }

  /// Removes the stored record with the record's id; nothing happens if there is none.
  public func delete(_ record: DynamicRecord) async throws {
    guard let id = record.id else { return }
    try await prepareIfNeeded(record.entity)
    try await apply(
      ChangeSet([.delete(entity: record.entity.name, id: id)], layouts: record.entity.schema.layouts))
  }

  /// The stored record of an entity with an id, or `nil`.
  public func record(_ entity: DynamicEntity, id: some ValueConvertible) async throws -> DynamicRecord? {
    try await prepareIfNeeded(entity)
    return try await getRows(entity: entity.name, ids: [id.storedValue]).first.map {
      DynamicRecord(entity, row: $0)
    }
  }

  /// The stored records of an entity that match a filter, in order.
  public func records(
    _ entity: DynamicEntity, where filter: Filter = .all, sort: [Sort] = [], limit: Int? = nil
  ) async throws -> [DynamicRecord] {
    try await prepareIfNeeded(entity)
    return try await fetchRows(Query(entity: entity.name, filter: filter, sort: sort, limit: limit)).map {
      DynamicRecord(entity, row: $0)
    }
  }

  /// Whether any stored record of an entity matches a filter: the dynamic form of
  /// ``StoreQuery/exists()``. Reads at most one row and decodes none.
  ///
  /// ```swift
  /// let hasDrafts = try await store.exists(notes, where: FieldRef("title") == "Untitled")
  /// ```
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a filter on a field the entity lacks or
  ///   of the wrong kind; the backend's error.
  public func exists(_ entity: DynamicEntity, where filter: Filter = .all) async throws -> Bool {
    try await prepareIfNeeded(entity)
    return try await hasRows(Query(entity: entity.name, filter: filter))
  }

  /// Some attributes of the stored records of an entity that match a filter, in order,
  /// without reading the others: the dynamic form of ``StoreQuery/select(fields:)``. Each
  /// element holds the values of `fields`, in that order.
  ///
  /// ```swift
  /// for values in try await store.select(["key", "title"], of: notes, sort: [Sort("title")]) {
  ///   print(values[0], values[1])
  /// }
  /// ```
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the entity lacks, or a filter or
  ///   sort that does not fit its schema; the backend's error.
  public func select(
    _ fields: [String], of entity: DynamicEntity, where filter: Filter = .all, sort: [Sort] = [],
    limit: Int? = nil
  ) async throws -> [[Value]] {
    try await prepareIfNeeded(entity)
    return try await fetchValues(
      Query(entity: entity.name, filter: filter, sort: sort, limit: limit), fields: fields
    ).map(\.values)
  }

  private func rowPreparing(_ record: DynamicRecord) async throws -> Row {
    try await prepareIfNeeded(record.entity)
    return try rethrowing { try record.row() }
  }

  /// Prepares the entity unless the store already has its schema.
  func prepareIfNeeded(_ entity: DynamicEntity) async throws {
    if schema(of: entity.name) != entity.schema { try await prepare([entity]) }
  }
}
