/// A batch of changes that a ``StorageBackend`` applies all together or not at all.
///
/// Operations apply in order, each seeing the effect of those before it: inserting a row and
/// then updating it in the same batch is fine. If any operation fails — a duplicate insert, an
/// update of a missing id, a unique-index violation — nothing in the batch is applied and the
/// error names the entity, id and field.
@_spi(Backend) public struct ChangeSet: Sendable, Hashable {
  /// One operation of a batch.
  public enum Operation: Sendable, Hashable {
    /// Add a row; fails with ``CofferError/Code/duplicateID`` if its id is stored.
    case insert(entity: String, row: Row)
    /// Replace a stored row; fails with ``CofferError/Code/notFound`` if its id is not stored.
    case update(entity: String, row: Row)
    /// Insert the row, or replace the stored row with its id.
    case upsert(entity: String, row: Row)
    /// Add many rows, made one at a time as the backend writes them; fails as the inserts of
    /// each row in turn would.
    case insertMany(entity: String, rows: RowSource)
    /// Remove the row with an id; removing an id that is not stored does nothing.
    case delete(entity: String, id: Value)
    /// Remove every row that matches a filter.
    case deleteMatching(entity: String, filter: Filter)
    /// Change fields of every row that matches a filter, each row as it is stored when the
    /// batch reaches it (no read by the caller, so no update is lost); fails as an update of
    /// each changed row would, or with ``CofferError/Code/valueOutOfRange`` when an increment
    /// overflows.
    case updateMatching(entity: String, filter: Filter, changes: [FieldUpdate])

    /// The entity the operation changes.
    public var entity: String {
      switch self {
      case .insert(let entity, _), .update(let entity, _), .upsert(let entity, _),
        .insertMany(let entity, _), .delete(let entity, _), .deleteMatching(let entity, _),
        .updateMatching(let entity, _, _):
        entity
      }
    }
  }

  /// The operations, in the order they apply.
  public var operations: [Operation]

  /// The schema each entity's rows were made for, by entity name.
  ///
  /// ``Store`` records the schema it encoded and checked each entity's rows against. A
  /// backend compares it with the entity's current schema inside its write transaction and,
  /// when another task prepared the entity with a different schema in between, passes the
  /// rows through a ``RowReshaper`` — so a row is never stored in a layout it was not made
  /// for. An entity missing here has rows in its current shape.
  public var layouts: [String: EntitySchema]

  /// What must still hold when the batch is applied, checked before its first operation; when
  /// one does not, nothing is applied and the batch fails with ``CofferError/Code/conflict``.
  /// Only a backend that declares ``BackendCapabilities/preconditions`` is given any.
  public var preconditions: [Precondition]

  /// A batch of operations whose rows have their entities' current shape.
  public init(_ operations: [Operation] = []) {
    self.operations = operations
    self.layouts = [:]
    self.preconditions = []
  }

  /// A batch of operations whose rows were made for the given schemas, applied only if the
  /// preconditions hold.
  public init(
    _ operations: [Operation], layouts: [String: EntitySchema], preconditions: [Precondition] = []
  ) {
    self.operations = operations
    self.layouts = layouts
    self.preconditions = preconditions
  }

  /// A reshaper for an entity's rows in this batch, to the schema the entity has now.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` when the rows cannot take that shape.
  @_spi(Backend) public func reshaper(for current: EntitySchema, store: String?) throws -> RowReshaper {
    try RowReshaper(layouts[current.name], storedAs: current, store: store)
  }

  /// Whether there is nothing to apply and nothing to check.
  public var isEmpty: Bool { operations.isEmpty && preconditions.isEmpty }

  /// Appends an insert.
  public mutating func insert(_ row: Row, into entity: String) {
    operations.append(.insert(entity: entity, row: row))
  }
  /// Appends an update.
  public mutating func update(_ row: Row, in entity: String) {
    operations.append(.update(entity: entity, row: row))
  }
  /// Appends an upsert.
  public mutating func upsert(_ row: Row, in entity: String) {
    operations.append(.upsert(entity: entity, row: row))
  }
  /// Appends a delete by id.
  public mutating func delete(id: Value, from entity: String) {
    operations.append(.delete(entity: entity, id: id))
  }
  /// Appends a delete of every matching row.
  public mutating func deleteMatching(_ filter: Filter, from entity: String) {
    operations.append(.deleteMatching(entity: entity, filter: filter))
  }
}

/// What applying a ``ChangeSet`` did.
public struct ChangeSummary: Sendable, Hashable {
  /// Rows added (inserts, and upserts of new ids).
  public var inserted: Int
  /// Rows replaced (updates, and upserts of stored ids).
  public var updated: Int
  /// Rows removed.
  public var deleted: Int

  /// A summary.
  @_spi(Backend) public init(inserted: Int = 0, updated: Int = 0, deleted: Int = 0) {
    self.inserted = inserted
    self.updated = updated
    self.deleted = deleted
  }
}

extension EntitySchema {
  /// This schema as the layout of its entity's rows in a ``ChangeSet``.
  @usableFromInline var layouts: [String: EntitySchema] { [name: self] }
}
