@_spi(Backend) import Coffer

/// A ``FieldUpdate`` on the wire: `{"field":"n","set":{"int":1}}` or `{"field":"n","add":{"int":1}}`.
package struct WireFieldUpdate: Codable, Sendable, Hashable {
  /// The update.
  package var update: FieldUpdate

  /// Wraps an update.
  package init(_ update: FieldUpdate) { self.update = update }

  private enum Key: String, CodingKey { case field, set, add }

  /// Decodes an update written by ``encode(to:)``.
  package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    let field = try container.decode(String.self, forKey: .field)
    switch (
      try container.decodeIfPresent(Value.self, forKey: .set),
      try container.decodeIfPresent(Value.self, forKey: .add)
    ) {
    case (let value?, nil): update = .set(field, to: value)
    case (nil, let amount?): update = .add(field, amount)
    default:
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: decoder.codingPath, debugDescription: "A field update has exactly one of set and add."))
    }
  }

  /// Encodes the update.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    try container.encode(update.field, forKey: .field)
    switch update.change {
    case .set(let value): try container.encode(value, forKey: .set)
    case .add(let amount): try container.encode(amount, forKey: .add)
    }
  }
}

/// A ``ChangeSet/Operation`` on the wire, one key naming its kind:
/// `{"insert":{"entity":"Note","row":[…]}}`.
package struct WireOperation: Codable, Sendable, Hashable {
  /// The operation.
  package var operation: ChangeSet.Operation

  /// Wraps an operation.
  package init(_ operation: ChangeSet.Operation) { self.operation = operation }

  private enum Key: String, CodingKey {
    case insert, update, upsert, insertMany, delete, deleteMatching, updateMatching
  }
  private enum Part: String, CodingKey { case entity, row, rows, id, filter, changes }

  /// Decodes an operation written by ``encode(to:)``.
  package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    guard let key = container.allKeys.first, container.allKeys.count == 1 else {
      throw DecodingError.dataCorrupted(
        .init(
          codingPath: decoder.codingPath, debugDescription: "An operation must have exactly one kind key."))
    }
    let part = try container.nestedContainer(keyedBy: Part.self, forKey: key)
    let entity = try part.decode(String.self, forKey: .entity)
    switch key {
    case .insert: operation = .insert(entity: entity, row: Row(try part.decode([Value].self, forKey: .row)))
    case .update: operation = .update(entity: entity, row: Row(try part.decode([Value].self, forKey: .row)))
    case .upsert: operation = .upsert(entity: entity, row: Row(try part.decode([Value].self, forKey: .row)))
    case .insertMany:
      let rows = try part.decode([[Value]].self, forKey: .rows).map(Row.init)
      operation = .insertMany(entity: entity, rows: RowSource(rows))
    case .delete: operation = .delete(entity: entity, id: try part.decode(Value.self, forKey: .id))
    case .deleteMatching:
      operation = .deleteMatching(
        entity: entity, filter: try part.decode(WireFilter.self, forKey: .filter).filter)
    case .updateMatching:
      operation = .updateMatching(
        entity: entity, filter: try part.decode(WireFilter.self, forKey: .filter).filter,
        changes: try part.decode([WireFieldUpdate].self, forKey: .changes).map(\.update))
    }
  }

  /// Encodes the operation under the name of its kind. An `insertMany` makes each of its rows.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    switch operation {
    case .insert(let entity, let row): try Self.encode(entity, row: row, in: &container, as: .insert)
    case .update(let entity, let row): try Self.encode(entity, row: row, in: &container, as: .update)
    case .upsert(let entity, let row): try Self.encode(entity, row: row, in: &container, as: .upsert)
    case .insertMany(let entity, let source):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .insertMany)
      try part.encode(entity, forKey: .entity)
      var rows = part.nestedUnkeyedContainer(forKey: .rows)
      for position in 0..<source.count { try rows.encode(try source.row(at: position).values) }
    case .delete(let entity, let id):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .delete)
      try part.encode(entity, forKey: .entity)
      try part.encode(id, forKey: .id)
    case .deleteMatching(let entity, let filter):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .deleteMatching)
      try part.encode(entity, forKey: .entity)
      try part.encode(WireFilter(filter), forKey: .filter)
    case .updateMatching(let entity, let filter, let changes):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .updateMatching)
      try part.encode(entity, forKey: .entity)
      try part.encode(WireFilter(filter), forKey: .filter)
      try part.encode(changes.map(WireFieldUpdate.init), forKey: .changes)
    }
  }

  private static func encode(
    _ entity: String, row: Row, in container: inout KeyedEncodingContainer<Key>, as key: Key
  ) throws {
    var part = container.nestedContainer(keyedBy: Part.self, forKey: key)
    try part.encode(entity, forKey: .entity)
    try part.encode(row.values, forKey: .row)
  }
}

/// A ``ChangeSet/Precondition`` on the wire: a query and the rows or count it must select.
package struct WirePrecondition: Codable, Sendable, Hashable {
  /// What the precondition reads.
  package var query: WireQuery
  /// The exact rows it must select, or `nil` when ``count`` is given.
  package var rows: [[Value]]?
  /// How many rows it must select, or `nil` when ``rows`` is given.
  package var count: Int?

  /// A precondition of its parts.
  package init(query: WireQuery, rows: [[Value]]?, count: Int?) {
    self.query = query
    self.rows = rows
    self.count = count
  }

  /// A wire precondition for a core one.
  package init(_ precondition: ChangeSet.Precondition) {
    query = WireQuery(precondition.query)
    switch precondition.expectation {
    case .rows(let expected): rows = expected.map(\.values)
    case .count(let expected): count = expected
    }
  }

  /// The core precondition, or `nil` when it names neither or both expectations.
  package var precondition: ChangeSet.Precondition? {
    switch (rows, count) {
    case (let rows?, nil): ChangeSet.Precondition(query.query, .rows(rows.map(Row.init)))
    case (nil, let count?): ChangeSet.Precondition(query.query, .count(count))
    default: nil
    }
  }
}

/// How the server keeps references whole for a batch.
package enum WireReferences: String, Codable, Sendable, Hashable {
  /// The server expands deletes by the entities' reference rules (`Store.apply`).
  case enforce
  /// The client's own store already did: the validated batch goes to the backend as it is.
  case expanded
}

/// A batch on the wire: applied all or nothing.
package struct WireBatch: Codable, Sendable, Hashable {
  /// The operations, in order.
  package var operations: [WireOperation]
  /// The schema each entity's rows are written in, when not the entity's current one.
  package var layouts: [String: EntitySchema]?
  /// Layouts named by their digests (``WireLayoutDigest``) in place of ``layouts``: the server
  /// takes each when it is the digest of the entity's stored schema, and refuses the batch with
  /// ``Coffer/CofferError/Code/schemaMismatch`` otherwise, applying nothing. An entity in both
  /// takes its whole layout.
  package var layoutDigests: [String: String]?
  /// What must hold for the batch to apply.
  package var preconditions: [WirePrecondition]?
  /// Who keeps references whole (the server when `nil`).
  package var references: WireReferences?

  /// A wire batch for a core change set.
  package init(_ changes: ChangeSet, references: WireReferences? = nil) {
    operations = changes.operations.map(WireOperation.init)
    layouts = changes.layouts.isEmpty ? nil : changes.layouts
    preconditions = changes.preconditions.isEmpty ? nil : changes.preconditions.map(WirePrecondition.init)
    self.references = references
  }
}

/// What a batch did, and whether this answer repeats the first one for its idempotency key.
package struct WireSummary: Codable, Sendable, Hashable {
  /// Rows inserted.
  package var inserted: Int
  /// Rows updated.
  package var updated: Int
  /// Rows deleted.
  package var deleted: Int
  /// Whether the batch had been applied before under the same key (and was not applied again).
  package var replayed: Bool

  /// A summary.
  package init(_ summary: ChangeSummary, replayed: Bool = false) {
    inserted = summary.inserted
    updated = summary.updated
    deleted = summary.deleted
    self.replayed = replayed
  }

  /// The core summary.
  package var summary: ChangeSummary { ChangeSummary(inserted: inserted, updated: updated, deleted: deleted) }
}
