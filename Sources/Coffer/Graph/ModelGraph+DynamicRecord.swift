/// ``DynamicRecord``s in a graph: the same identity map, events, validation (the entity's
/// ``DynamicEntity/validate`` rule), undo and saving as typed values.
extension ModelGraph {
  /// The graph's record of an entity with an id, read from the source the first time and kept;
  /// `nil` when there is none.
  public func record(_ entity: DynamicEntity, id: some ValueConvertible) async throws -> DynamicRecord? {
    let adapter = try await adapter(for: entity)
    guard let value = try await load(ModelKey(entity: entity.name, id: id.storedValue), adapter: adapter)
    else { return nil }
    return value.value as? DynamicRecord ?? DynamicRecord(entity, row: value.row)
  }

  /// Adds the record, or replaces the one with its id. Events name each attribute that changed.
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` for a new record (no id) or a required attribute
  ///   left unset, or when the entity's validation reports problems.
  public func upsert(_ record: DynamicRecord, options: ChangeOptions = .standard) async throws {
    let adapter = try await adapter(for: record.entity)
    let row = try store.rethrowing { try record.row() }
    let key = ModelKey(entity: record.entity.name, id: row[adapter.schema.idPosition])
    try await perform(
      [
        Edit(
          key: key, new: GraphValue(row: row, value: DynamicRecord(record.entity, row: row)),
          requirement: .put, adapter: adapter)
      ],
      options: options)
  }

  /// Deletes the record with the record's id; the deletion is saved with the next save.
  public func delete(_ record: DynamicRecord, options: ChangeOptions = .standard) async throws {
    guard let id = record.id else { return }
    let adapter = try await adapter(for: record.entity)
    try await perform(
      [
        Edit(key: ModelKey(entity: record.entity.name, id: id), new: nil, requirement: .put, adapter: adapter)
      ],
      options: options)
  }

  /// The adapter of a dynamic entity, preparing it in the store the first time.
  func adapter(for entity: DynamicEntity) async throws -> EntityAdapter {
    try await store.prepareIfNeeded(entity)
    var validate: (@Sendable (any Sendable) -> [ValidationProblem])?
    if let rule = entity.validate {
      validate = { value in
        guard let record = value as? DynamicRecord else { return [] }
        return rule(record)
      }
    }
    let decode: @Sendable (Row) throws -> any Sendable = { DynamicRecord(entity, row: $0) }
    let adapter = EntityAdapter(
      schema: entity.schema, retainsLoaded: true, decode: decode, validate: validate)
    try register(adapter)
    return adapter
  }
}
