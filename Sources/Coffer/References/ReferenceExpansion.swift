/// Turns a batch into one that keeps every enforced ``EntityReference`` whole, so that no
/// backend needs to know about references.
///
/// It walks the batch in order, remembering the rows it writes and deletes, and adds:
/// - for a row written with a non-null reference: a precondition that the referenced row is
///   stored (unless the batch itself writes or deletes it: references are checked as of the end
///   of the batch), after checking it is, so that a
///   missing row is a ``CofferError/Code/referenceViolation`` and a row deleted by another
///   writer in between a ``CofferError/Code/conflict`` (which ``Store`` answers by expanding
///   the batch again);
/// - for a deleted row, per reference to its entity: under ``DeleteRule/cascade`` the deletes
///   of the referring rows (by filter when nothing refers to them, else one by one, each
///   expanded in turn, once per row however the references cycle); under
///   ``DeleteRule/nullify`` an update by filter setting the field to null; under
///   ``DeleteRule/deny`` a precondition that no other row refers to it. Each comes with a
///   precondition on the referring rows as read, so a concurrent writer makes the batch
///   conflict rather than leave a dangling reference — also on PostgreSQL, where a batch with
///   preconditions runs serializable;
/// - a delete by filter of a referenced entity becomes the deletes of the rows it selects now,
///   with a precondition that it still selects exactly them.
struct ReferenceExpansion {
  /// What the batch did to one row so far.
  private enum Written {
    case row(Row)
    case deleted
  }

  /// The row whose reference a check is about.
  private struct Referrer {
    let entity: String
    let id: Value?
    let field: String
  }

  /// A deleted row whose rules were expanded.
  private struct RowKey: Hashable {
    let entity: String
    let id: Value
  }

  /// The most ids one lookup precondition lists.
  private static let chunkSize = 500

  let map: ReferenceMap
  let backend: any StorageBackend
  let store: String

  /// The operations of the expanded batch, in order.
  private(set) var operations: [ChangeSet.Operation] = []
  /// The preconditions the expansion added.
  private(set) var preconditions: [ChangeSet.Precondition] = []
  /// The layouts of the batch, with those of the entities the expansion added operations on.
  private(set) var layouts: [String: EntitySchema]
  /// How many rows the rules delete and update, beside what the batch's own operations do: the
  /// preconditions pin them, so the numbers are exact when the batch applies.
  private(set) var ruleSummary = ChangeSummary()

  private var written: [String: [Value: Written]] = [:]
  private var wanted: [String: [Value: Referrer]] = [:]
  private var expanded: Set<RowKey> = []
  /// The filters of the batch's deletes by filter so far, by entity.
  private var removedBy: [String: [Filter]] = [:]
  /// The ids that an update by filter of the batch set reference fields to, by referenced entity.
  private var retargeted: [String: Set<Value>] = [:]

  init(map: ReferenceMap, backend: any StorageBackend, store: String, layouts: [String: EntitySchema]) {
    self.map = map
    self.backend = backend
    self.store = store
    self.layouts = layouts
  }

  /// Expands checked operations.
  mutating func expand(_ batch: [ChangeSet.Operation]) async throws {
    for operation in batch {
      switch operation {
      case .insert(let entity, let row), .update(let entity, let row), .upsert(let entity, let row):
        operations.append(operation)
        try wrote(row, in: entity)
      case .insertMany(let entity, let rows):
        guard map.outgoing[entity] != nil || map.incoming[entity] != nil else {
          operations.append(operation)
          continue
        }
        let all = try (0..<rows.count).map { try rows.row(at: $0) }
        operations.append(.insertMany(entity: entity, rows: RowSource(all)))
        for row in all { try wrote(row, in: entity) }
      case .delete(let entity, let id):
        operations.append(operation)
        try await deleted(id, in: entity)
      case .deleteMatching(let entity, let filter):
        try await deleteMatching(filter, in: entity, operation: operation)
      case .updateMatching(let entity, let filter, let changes):
        operations.append(operation)
        try updateMatching(filter, changes, in: entity)
      }
    }
    try await lookUpWanted()
  }

  // MARK: Writes

  /// Notes a written row and what it refers to.
  private mutating func wrote(_ row: Row, in entity: String) throws {
    let schema = try layout(of: entity)
    let id = row[schema.idPosition]
    written[entity, default: [:]][id] = .row(row)
    for link in map.outgoing[entity] ?? [] {
      guard let position = schema.position(of: link.reference.field) else { continue }
      let target = row[position]
      if target.isNull { continue }
      try require(
        target, in: link.reference.entity, by: Referrer(entity: entity, id: id, field: link.reference.field))
    }
  }

  /// Notes that a referenced row must be stored when the batch ends.
  private mutating func require(_ target: Value, in entity: String, by referrer: Referrer) throws {
    switch written[entity]?[target] {
    case .row?: return
    case .deleted?: throw missing(referrer, target: entity)
    case nil: if wanted[entity]?[target] == nil { wanted[entity, default: [:]][target] = referrer }
    }
  }

  private mutating func updateMatching(_ filter: Filter, _ changes: [FieldUpdate], in entity: String) throws {
    let schema = try layout(of: entity)
    for link in map.outgoing[entity] ?? [] {
      for change in changes where change.field == link.reference.field {
        switch change.change {
        case .set(let target):
          if target.isNull { continue }
          retargeted[link.reference.entity, default: []].insert(target)
          try require(
            target, in: link.reference.entity, by: Referrer(entity: entity, id: nil, field: change.field))
        case .add:
          throw CofferError(
            .referenceViolation,
            "An update by query adds to '\(entity).\(change.field)', which refers to \(link.reference.entity) rows: "
              + "set a reference to an id instead.", store: store, entity: entity, field: change.field)
        }
      }
    }
    guard let rows = written[entity], !rows.isEmpty else { return }
    let matcher = try CompiledFilter(filter, schema: schema)
    let updates = try CompiledFieldUpdates(changes, schema: schema)
    for (id, state) in rows {
      if case .row(let row) = state, matcher.matches(row) {
        written[entity, default: [:]][id] = .row(try updates.apply(to: row, store: store))
      }
    }
  }

  // MARK: Deletes

  private mutating func deleteMatching(_ filter: Filter, in entity: String, operation: ChangeSet.Operation)
    async throws
  {
    let schema = try layout(of: entity)
    let matcher = try CompiledFilter(filter, schema: schema)
    var ids: [Value] = []
    if map.incoming[entity] != nil {
      // The rows it deletes must be known to apply their rules: read them, and make the batch
      // conflict if it would select others when it is applied.
      let query = try outside(filter, in: entity, schema: schema)
      let rows = try await backend.fetch(query)
      preconditions.append(ChangeSet.Precondition(query, .rows(rows)))
      ids = rows.map { $0[schema.idPosition] }
    } else {
      operations.append(operation)
    }
    for (id, state) in written[entity] ?? [:] {
      if case .row(let row) = state, matcher.matches(row) {
        if map.incoming[entity] != nil {
          ids.append(id)
        } else {
          written[entity, default: [:]][id] = .deleted
        }
      }
    }
    removedBy[entity, default: []].append(filter)
    for id in ids.sorted(by: { ValueOrder.compare($0, $1) < 0 }) {
      operations.append(.delete(entity: entity, id: id))
      try await deleted(id, in: entity)
    }
  }

  /// Applies the delete rules of the references to a deleted row.
  private mutating func deleted(_ id: Value, in entity: String) async throws {
    written[entity, default: [:]][id] = .deleted
    guard let links = map.incoming[entity], expanded.insert(RowKey(entity: entity, id: id)).inserted else {
      return
    }
    for link in links { try await apply(link, toDeleted: id, in: entity) }
  }

  private mutating func apply(_ link: ReferenceMap.Link, toDeleted id: Value, in entity: String) async throws
  {
    let referring = link.schema.name
    let field = link.reference.field
    let schema = try layout(of: referring)
    guard let position = schema.position(of: field) else { return }
    let refersToRow = Filter.compare(field: field, op: .equal, value: id)
    var inBatch: [Value] = []
    for (rowID, state) in written[referring] ?? [:] {
      if case .row(let row) = state, row[position] == id { inBatch.append(rowID) }
    }
    inBatch.sort { ValueOrder.compare($0, $1) < 0 }
    let query = try outside(refersToRow, in: referring, schema: schema)
    switch link.reference.onDelete {
    case .deny:
      if let first = inBatch.first {
        throw denied(entity, id, by: Referrer(entity: referring, id: first, field: field))
      }
      if retargeted[entity]?.contains(id) == true {
        throw denied(entity, id, by: Referrer(entity: referring, id: nil, field: field))
      }
      var probe = query
      probe.limit = 1
      if let row = try await backend.fetch(probe).first {
        throw denied(entity, id, by: Referrer(entity: referring, id: row[schema.idPosition], field: field))
      }
      preconditions.append(ChangeSet.Precondition(query, .count(0)))
    case .nullify:
      let count = try await backend.count(query)
      preconditions.append(ChangeSet.Precondition(query, .count(count)))
      ruleSummary.updated += count + inBatch.count
      operations.append(
        .updateMatching(entity: referring, filter: refersToRow, changes: [.set(field, to: .null)]))
      for rowID in inBatch {
        if case .row(var row)? = written[referring]?[rowID] {
          row[position] = .null
          written[referring, default: [:]][rowID] = .row(row)
        }
      }
    case .cascade:
      if map.incoming[referring] == nil {
        let count = try await backend.count(query)
        preconditions.append(ChangeSet.Precondition(query, .count(count)))
        ruleSummary.deleted += count + inBatch.count
        operations.append(.deleteMatching(entity: referring, filter: refersToRow))
        for rowID in inBatch { written[referring, default: [:]][rowID] = .deleted }
      } else {
        let rows = try await backend.fetch(query)
        preconditions.append(ChangeSet.Precondition(query, .rows(rows)))
        for rowID in rows.map({ $0[schema.idPosition] }) + inBatch {
          ruleSummary.deleted += 1
          operations.append(.delete(entity: referring, id: rowID))
          try await deleted(rowID, in: referring)
        }
        // Rows an update by query pointed at the deleted row, if any.
        if retargeted[entity]?.contains(id) == true {
          operations.append(.deleteMatching(entity: referring, filter: refersToRow))
        }
      }
    case .none:
      return
    }
  }

  /// A checked query for the stored rows that match `filter` and that the batch did not write
  /// or delete by filter before: what the batch finds of them is known from the rows it wrote.
  private mutating func outside(_ filter: Filter, in entity: String, schema: EntitySchema) throws -> Query {
    var selection = filter
    let touched = (written[entity] ?? [:]).keys.sorted { ValueOrder.compare($0, $1) < 0 }
    if !touched.isEmpty { selection = selection && .not(.isIn(schema.idField.name, touched)) }
    for removed in removedBy[entity] ?? [] { selection = selection && .not(removed) }
    return try QueryValidator.validate(Query(entity: entity, filter: selection), schema: schema)
  }

  // MARK: Lookups

  /// Checks that every referenced row the batch did not write is stored, and adds the
  /// preconditions that it still is when the batch is applied.
  private mutating func lookUpWanted() async throws {
    for entity in wanted.keys.sorted() {
      guard let wants = wanted[entity] else { continue }
      // A row the batch writes later needs no lookup; one it deletes later had its rule applied
      // to the rows written before.
      let ids = wants.keys.filter { written[entity]?[$0] == nil }.sorted { ValueOrder.compare($0, $1) < 0 }
      guard let schema = map.schemas[entity] else {
        if let first = ids.first, let referrer = wants[first] { throw missing(referrer, target: entity) }
        continue
      }
      var start = 0
      while start < ids.count {
        let chunk = Array(ids[start..<min(start + Self.chunkSize, ids.count)])
        start += chunk.count
        let found = Set(try await backend.get(entity: schema, ids: chunk).map { $0[schema.idPosition] })
        if let absent = chunk.first(where: { !found.contains($0) }), let referrer = wants[absent] {
          throw missing(referrer, target: entity)
        }
        let query = try QueryValidator.validate(
          Query(entity: entity, filter: .isIn(schema.idField.name, chunk)), schema: schema)
        preconditions.append(ChangeSet.Precondition(query, .count(chunk.count)))
      }
      layouts[entity] = layouts[entity] ?? schema
    }
  }

  /// The schema an entity's rows in this batch are in: the batch's layout, else the stored one.
  private mutating func layout(of entity: String) throws -> EntitySchema {
    if let schema = layouts[entity] { return schema }
    guard let schema = map.schemas[entity] else {
      throw CofferError(
        .unknownEntity, "Entity '\(entity)' is not stored in this store.", store: store, entity: entity)
    }
    layouts[entity] = schema
    return schema
  }

  // MARK: Errors

  private func missing(_ referrer: Referrer, target: String) -> CofferError {
    let subject =
      referrer.id.map { "The \(referrer.entity) with id \($0)" } ?? "An update of \(referrer.entity) rows"
    let message =
      "\(subject) refers through '\(referrer.field)' to a \(target) that is not stored (or is deleted earlier "
      + "in the same batch). Nothing was applied. Store the \(target) first, in this batch or before."
    if let id = referrer.id {
      return CofferError(
        .referenceViolation, message, store: store, entity: referrer.entity, id: id, field: referrer.field)
    }
    return CofferError(
      .referenceViolation, message, store: store, entity: referrer.entity, field: referrer.field)
  }

  private func denied(_ entity: String, _ id: Value, by referrer: Referrer) -> CofferError {
    let by = referrer.id.map { "the \(referrer.entity) with id \($0)" } ?? "a \(referrer.entity)"
    return CofferError(
      .referenceViolation,
      "The \(entity) with id \(id) cannot be deleted: \(by) refers to it through '\(referrer.field)', whose delete "
        + "rule is deny. Nothing was applied. Delete the referring rows or point them elsewhere first.",
      store: store, entity: entity, id: id, field: "\(referrer.entity).\(referrer.field)")
  }
}
