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
/// - for deleted rows, per reference to their entity: under ``DeleteRule/cascade`` the deletes
///   of the referring rows (by filter when nothing refers to them, else by id, their own rules
///   applied in turn, once per row however the references cycle); under
///   ``DeleteRule/nullify`` an update by filter setting the field to null; under
///   ``DeleteRule/deny`` a precondition that no other row refers to them. Each comes with a
///   precondition on the referring rows as read (their number, or the ids of those it deletes
///   by id: only ids are read for them), so a concurrent writer makes the batch conflict rather
///   than leave a dangling reference — also on PostgreSQL, where a batch with preconditions
///   runs serializable;
/// - a delete by filter of a referenced entity becomes the deletes of the rows it selects now,
///   with a precondition that it still selects exactly them.
///
/// The rules are applied level by level, never row by row: the rows one operation of the batch
/// deletes are the first level, and the rows the cascades delete because of one level are the
/// next. Each reference reads the rows that refer to a level with one `isIn` query per 500
/// deleted rows (or as many as a ``LongListFiltering`` backend takes), and its filter, its
/// precondition and its operation cover the same chunk. So deleting a notebook with a thousand
/// notes, each with its labellings, reads the notes' ids once and counts the labellings in two
/// queries (one on PostgreSQL), and adds as many deletes by filter, whatever the number of
/// notes — not a query, a precondition and a delete per note.
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

  /// The most ids one lookup, one query for referring rows, and its precondition and
  /// operation list, unless the backend takes more (``LongListFiltering``).
  static let chunkSize = 500

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
  /// The layouts of the id field alone, by entity (see `idsOnly(_:schema:)`).
  private var idLayouts: [String: EntitySchema] = [:]

  /// The most ids of one chunk on this backend.
  let chunkSize: Int

  init(map: ReferenceMap, backend: any StorageBackend, store: String, layouts: [String: EntitySchema]) {
    self.map = map
    self.backend = backend
    self.store = store
    self.layouts = layouts
    chunkSize = max(1, (backend as? any LongListFiltering)?.valuesPerFilter ?? Self.chunkSize)
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
        try await deleted([id], in: entity)
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
      let query = try idsOnly(outside(filter, in: entity, schema: schema), schema: schema)
      let rows = try await backend.fetch(query)
      preconditions.append(ChangeSet.Precondition(query, .rows(rows)))
      ids = rows.map { $0[0] }
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
    ids.sort { ValueOrder.compare($0, $1) < 0 }
    for id in ids { operations.append(.delete(entity: entity, id: id)) }
    try await deleted(ids, in: entity)
  }

  /// Applies the delete rules of the references to deleted rows, level by level: the rows that
  /// the cascades delete because of one level are the next, until a level deletes nothing that
  /// another row refers to. Each row's rules are applied once, however the references cycle.
  private mutating func deleted(_ ids: [Value], in entity: String) async throws {
    var level: [(entity: String, ids: [Value])] = [(entity, ids)]
    while !level.isEmpty {
      // Every row of the level is deleted before any rule reads: a row that refers to another
      // of the same level is not one the rules must keep whole.
      for (entity, ids) in level {
        for id in ids { written[entity, default: [:]][id] = .deleted }
      }
      var next = Level()
      for (entity, ids) in level {
        guard let links = map.incoming[entity] else { continue }
        let fresh = ids.filter { expanded.insert(RowKey(entity: entity, id: $0)).inserted }
        if fresh.isEmpty { continue }
        for link in links { try await apply(link, toDeleted: fresh, in: entity, next: &next) }
      }
      level = next.entities.map { ($0, next.ids[$0] ?? []) }
    }
  }

  /// The rows one level of cascades deletes, by entity in the order they first came up.
  private struct Level {
    var entities: [String] = []
    var ids: [String: [Value]] = [:]

    mutating func add(_ ids: [Value], in entity: String) {
      if ids.isEmpty { return }
      if self.ids[entity] == nil { entities.append(entity) }
      self.ids[entity, default: []].append(contentsOf: ids)
    }
  }

  /// Applies one reference's rule to rows of the entity it refers to, deleted at one level;
  /// the rows a cascade deletes go to `next`.
  private mutating func apply(
    _ link: ReferenceMap.Link, toDeleted ids: [Value], in entity: String, next: inout Level
  ) async throws {
    let referring = link.schema.name
    let field = link.reference.field
    let schema = try layout(of: referring)
    guard let position = schema.position(of: field) else { return }
    let deletedIDs = Set(ids)
    // Rows the batch wrote that refer to a deleted row: as they are now, not as stored.
    var inBatch: [(id: Value, target: Value)] = []
    for (rowID, state) in written[referring] ?? [:] {
      if case .row(let row) = state, deletedIDs.contains(row[position]) {
        inBatch.append((rowID, row[position]))
      }
    }
    inBatch.sort { ValueOrder.compare($0.id, $1.id) < 0 }
    let chunks = stride(from: 0, to: ids.count, by: chunkSize).map {
      Array(ids[$0..<min($0 + chunkSize, ids.count)])
    }
    let retargetedIDs = ids.filter { retargeted[entity]?.contains($0) == true }
    switch link.reference.onDelete {
    case .deny:
      if let first = inBatch.first {
        throw denied(entity, first.target, by: Referrer(entity: referring, id: first.id, field: field))
      }
      if let first = retargetedIDs.first {
        throw denied(entity, first, by: Referrer(entity: referring, id: nil, field: field))
      }
      for chunk in chunks {
        let query = try outside(Self.refers(field, to: chunk), in: referring, schema: schema)
        var probe = query
        probe.limit = 1
        if let row = try await backend.fetch(probe).first {
          throw denied(
            entity, row[position], by: Referrer(entity: referring, id: row[schema.idPosition], field: field))
        }
        preconditions.append(ChangeSet.Precondition(query, .count(0)))
      }
    case .nullify:
      for chunk in chunks {
        let refersToChunk = Self.refers(field, to: chunk)
        let query = try outside(refersToChunk, in: referring, schema: schema)
        let count = try await backend.count(query)
        preconditions.append(ChangeSet.Precondition(query, .count(count)))
        ruleSummary.updated += count
        operations.append(
          .updateMatching(entity: referring, filter: refersToChunk, changes: [.set(field, to: .null)]))
      }
      ruleSummary.updated += inBatch.count
      for (rowID, _) in inBatch {
        if case .row(var row)? = written[referring]?[rowID] {
          row[position] = .null
          written[referring, default: [:]][rowID] = .row(row)
        }
      }
    case .cascade:
      if map.incoming[referring] == nil {
        for chunk in chunks {
          let refersToChunk = Self.refers(field, to: chunk)
          let query = try outside(refersToChunk, in: referring, schema: schema)
          let count = try await backend.count(query)
          preconditions.append(ChangeSet.Precondition(query, .count(count)))
          ruleSummary.deleted += count
          operations.append(.deleteMatching(entity: referring, filter: refersToChunk))
        }
        ruleSummary.deleted += inBatch.count
        for (rowID, _) in inBatch { written[referring, default: [:]][rowID] = .deleted }
      } else {
        var doomed: [Value] = []
        for chunk in chunks {
          let query = try idsOnly(
            outside(Self.refers(field, to: chunk), in: referring, schema: schema), schema: schema)
          let rows = try await backend.fetch(query)
          preconditions.append(ChangeSet.Precondition(query, .rows(rows)))
          doomed += rows.map { $0[0] }
        }
        doomed += inBatch.map(\.id)
        ruleSummary.deleted += doomed.count
        for rowID in doomed {
          operations.append(.delete(entity: referring, id: rowID))
          // Marked now, so that another reference of this level does not read them again.
          written[referring, default: [:]][rowID] = .deleted
        }
        next.add(doomed, in: referring)
        // Rows an update by query pointed at a deleted row, if any.
        if !retargetedIDs.isEmpty {
          operations.append(.deleteMatching(entity: referring, filter: Self.refers(field, to: retargetedIDs)))
        }
      }
    case .none:
      return
    }
  }

  /// The rows whose field refers to one of `ids`: an equality for one id.
  private static func refers(_ field: String, to ids: [Value]) -> Filter {
    ids.count == 1 ? .compare(field: field, op: .equal, value: ids[0]) : .isIn(field, ids)
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

  /// `query` reading only the ids of the rows it selects, in a layout of the id field alone:
  /// all that deleting them by id needs, and all its precondition must pin — that the query
  /// still selects exactly those rows, whatever they hold by then. A backend may then read the
  /// id column alone.
  private mutating func idsOnly(_ query: Query, schema: EntitySchema) throws -> Query {
    var narrowed = query
    if let layout = idLayouts[schema.name] {
      narrowed.layout = layout
    } else {
      let layout = try EntitySchema(name: schema.name, fields: [schema.idField], idField: schema.idField.name)
      idLayouts[schema.name] = layout
      narrowed.layout = layout
    }
    return narrowed
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
        let chunk = Array(ids[start..<min(start + chunkSize, ids.count)])
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
