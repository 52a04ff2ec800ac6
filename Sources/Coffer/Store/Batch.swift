/// Changes collected inside ``Store/batch(_:)`` and applied all together or not at all.
///
/// ```swift
/// try await store.batch { batch in
///   try batch.insert(thread)
///   for message in messages { try batch.insert(message) }
///   try batch.delete(Draft.self, id: draftID)
/// }
/// ```
public struct Batch: Sendable {
  /// The operations collected so far.
  public private(set) var changes = ChangeSet()
  let codecs: [ObjectIdentifier: any CodecBoxing]

  /// Adds an insert.
  public mutating func insert<T: Storable>(_ value: T) throws {
    let codec = try codec(T.self)
    changes.insert(try codec.encode(value), into: codec.schema.name)
  }

  /// Adds an update.
  public mutating func update<T: Storable>(_ value: T) throws {
    let codec = try codec(T.self)
    changes.update(try codec.encode(value), in: codec.schema.name)
  }

  /// Adds an upsert.
  public mutating func upsert<T: Storable>(_ value: T) throws {
    let codec = try codec(T.self)
    changes.upsert(try codec.encode(value), in: codec.schema.name)
  }

  /// Adds a delete of the stored value with the value's id.
  public mutating func delete<T: Storable>(_ value: T) throws {
    try delete(T.self, id: value.id)
  }

  /// Adds a delete by id.
  public mutating func delete<T: Storable>(_ type: T.Type, id: T.ID) throws {
    let codec = try codec(T.self)
    changes.delete(id: id.storedValue, from: codec.schema.name)
  }

  /// Adds a delete of every value that matches a filter.
  public mutating func deleteAll<T: Storable>(_ type: T.Type, where filter: Filter = .all) throws {
    let codec = try codec(T.self)
    changes.deleteMatching(try QueryValidator.validate(filter, schema: codec.schema), from: codec.schema.name)
  }

  /// The codec of a type, noting the schema its rows are made for.
  private mutating func codec<T: Storable>(_ type: T.Type) throws -> EntityCodec<T> {
    guard let codec = codecs[ObjectIdentifier(type)].map({ CodecBox<T>.unbox($0) }) else {
      throw CofferError(
        .unknownEntity,
        "\(T.self) is used in a batch without being declared. List it: store.batch(for: [\(T.self).self]) { … }, "
          + "or prepare it first with store.prepare([\(T.self).self]).",
        entity: T.entityName)
    }
    changes.layouts[codec.schema.name] = codec.schema
    return codec
  }
}

extension Store {
  /// Collects changes and applies them as one atomic batch: all of them or, if any fails,
  /// none. Types used in the batch must have been used with or prepared in this store before,
  /// or be listed in `types`.
  ///
  /// - Returns: what the batch did.
  @discardableResult
  public func batch(
    for types: [any Storable.Type] = [], _ body: (inout Batch) throws -> Void
  ) async throws -> ChangeSummary {
    try await prepare(types)
    var batch = Batch(
      codecs: prepared.withLock { state in
        state.codecs
      })
    try body(&batch)
    return try await apply(batch.changes)
  }
}
