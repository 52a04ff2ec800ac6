/// Changes collected inside ``Store/batch(for:_:)`` and applied all together or not at all.
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
  @_spi(Backend) public private(set) var changes = ChangeSet()
  /// The codecs of the types the batch may use, by type.
  var codecs: [ObjectIdentifier: any CodecBoxing]
  /// Types first met in this batch: their codecs were made here, and the store prepares their
  /// entities before it applies the batch.
  var unprepared: [ObjectIdentifier] = []

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

  /// Adds a delete of every value that matches a filter written with key paths:
  /// `batch.deleteAll(Message.self, where: \.threadID == old)`.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when a key path reads no stored property.
  public mutating func deleteAll<T: KeyPathStorable>(_ type: T.Type, where filter: KeyPathFilter<T>) throws {
    if let error = filter.error { throw error }
    try deleteAll(type, where: filter.filter)
  }

  /// Adds an operation made and checked elsewhere (a change by query), with the schema its
  /// filter was checked against.
  mutating func append(_ operation: ChangeSet.Operation, layout: EntitySchema) {
    changes.operations.append(operation)
    changes.layouts[layout.name] = layout
  }

  /// The codec of a type, made here for a type the store has not seen yet, noting the schema
  /// its rows are made for.
  private mutating func codec<T: Storable>(_ type: T.Type) throws -> RowCodec<T> {
    let key = ObjectIdentifier(type)
    let codec: RowCodec<T>
    if let box = codecs[key] {
      codec = CodecBox<T>.unbox(box)
    } else {
      codec = try RowCodec<T>()
      codecs[key] = CodecBox(codec)
      unprepared.append(key)
    }
    changes.layouts[codec.schema.name] = codec.schema
    return codec
  }
}

extension Store {
  /// Collects changes and applies them as one atomic batch: all of them or, if any fails,
  /// none. A type the store has not seen yet is prepared before the batch is applied, as
  /// ``insert(_:)-(T)`` prepares it; list types in `types` to prepare them (and meet a schema
  /// mismatch) before `body` runs.
  ///
  /// ```swift
  /// let summary = try await store.batch(for: [Thread.self, Message.self]) { batch in
  ///   try batch.insert(thread)
  ///   try batch.deleteAll(Message.self, where: FieldRef("threadID") == oldThread.id)
  /// }
  /// print(summary.inserted, summary.deleted)
  /// ```
  ///
  /// `body` runs once, before anything is written; nothing is written if it throws.
  ///
  /// - Parameters:
  ///   - types: types to prepare before `body` runs; none by default.
  ///   - body: adds the changes to the ``Batch`` it is given, in the order they apply.
  /// - Returns: what the batch did: how many rows it inserted, updated and deleted
  ///   (``ChangeSummary``; upserts count as inserts or updates, a delete of a missing id
  ///   counts nothing, and rows that an ``EntityReference``'s delete rule removes or
  ///   nullifies are not counted).
  /// - Throws: the first failing change's error (``CofferError/Code/duplicateID``,
  ///   ``CofferError/Code/notFound``, ``CofferError/Code/uniqueViolation``, …), with nothing
  ///   applied, or the error `body` threw.
  @discardableResult
  public func batch(
    for types: [any Storable.Type] = [], _ body: (inout Batch) throws -> Void
  ) async throws -> ChangeSummary {
    try await prepare(types)
    var batch = Batch(codecs: prepared.withLock { $0.codecs })
    try body(&batch)
    for key in batch.unprepared {
      if let box = batch.codecs[key] { try await adopt(box, for: key) }
    }
    return try await apply(batch.changes)
  }
}
