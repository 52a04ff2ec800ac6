/// Entities held in memory with the reference semantics of every ``StorageBackend`` operation.
///
/// `MemoryBackend` is this behind a lock; `PlistBackend` is this plus a file. The conformance
/// suite's differential check runs every batch and query against an instance of this and
/// compares. It is a value: copying it takes a snapshot in constant time, and the copy is
/// unaffected by later changes (copy-on-write).
@_spi(Backend) public struct InMemoryTables: Sendable {
  var tables: [String: InMemoryTable] = [:]
  /// The store name used in error messages.
  public var storeName: String?
  /// The migration steps the store has run, in order (see ``SchemaEditor/migrations()``).
  public var migrations: [MigrationRecord] = []

  /// No entities.
  public init(storeName: String? = nil) { self.storeName = storeName }

  /// The schemas of the prepared entities, by name.
  public var schemas: [String: EntitySchema] { tables.mapValues(\.schema) }

  /// The schema an entity is stored in, or `nil` if it was never prepared.
  public func schema(of entity: String) -> EntitySchema? { tables[entity]?.schema }

  /// The number of rows of an entity (0 if unknown).
  public func rowCount(_ entity: String) -> Int { tables[entity]?.rows.count ?? 0 }

  /// The stored row of an entity with an id, in the entity's current layout, or `nil`.
  public func row(of entity: String, id: Value) -> Row? { tables[entity]?.rows[id] }

  /// Every row of an entity, in no particular order.
  public func allRows(_ entity: String) -> [Row] { tables[entity].map { Array($0.rows.values) } ?? [] }

  /// Prepares entities, evolving those already present (see ``SchemaEvolution``), and returns
  /// every entity's schema, sorted by name (see ``StorageBackend/prepare(_:)``). Either every
  /// schema is prepared or, on error, nothing changes.
  @discardableResult
  public mutating func prepare(_ schemas: [EntitySchema]) throws -> [EntitySchema] {
    var updated = tables
    for schema in schemas {
      if let existing = updated[schema.name] {
        if existing.schema != schema {
          updated[schema.name] = try existing.evolved(to: schema, store: storeName)
        }
      } else {
        updated[schema.name] = InMemoryTable(schema: schema)
      }
    }
    tables = updated
    return updated.values.map(\.schema).sorted { $0.name < $1.name }
  }

  /// Replaces the rows of an entity wholesale (used when loading a snapshot); checks unique
  /// constraints and duplicate ids.
  ///
  /// Builds what `InMemoryTable.put(_:_:)` would, but each index order is sorted once and laid
  /// out whole (`InMemoryTable.addToOrders(_:)`), not grown row by row.
  public mutating func load(_ rows: [Row], into entity: String) throws {
    var table = InMemoryTable(schema: try table(entity).schema)
    table.rows.reserveCapacity(rows.count)
    table.unique = table.unique.map { _ in Dictionary(minimumCapacity: rows.count) }
    for row in rows {
      let id = row[table.schema.idPosition]
      if table.rows[id] != nil { throw duplicate(table.schema, id) }
      try table.checkUnique(row, store: storeName)
      table.put(id, row, ordered: false)
    }
    table.addToOrders(rows)
    tables[entity] = table
  }

  /// Applies a batch all or nothing (see ``StorageBackend/apply(_:)``). Rows made for another
  /// schema than their entity's current one are reshaped (see ``ChangeSet/layouts``).
  public mutating func apply(_ changes: ChangeSet) throws -> ChangeSummary {
    var undo: [UndoStep] = []
    return try apply(changes, undo: &undo)
  }

  /// Applies a batch all or nothing, as ``apply(_:)`` does, and gathers what it did to each row
  /// into `changes` for the change feed (see ``ChangeCollector``).
  public mutating func apply(_ batch: ChangeSet, collecting changes: inout ChangeCollector) throws
    -> ChangeSummary
  {
    var undo: [UndoStep] = []
    let summary = try apply(batch, undo: &undo)
    // The undo log names every row the batch touched, in order, with what it held before. The
    // table is looked up once per run of steps on one entity, not once per row, and only its
    // schema and rows are kept from it.
    var entity: String?
    var current: (schema: EntitySchema, rows: [Value: Row])?
    for step in undo {
      let name: String
      switch step {
      case .put(let stepEntity, _, _), .added(let stepEntity, _): name = stepEntity
      }
      if name != entity {
        entity = name
        current = tables[name].map { ($0.schema, $0.rows) }
      }
      guard let current else { continue }
      switch step {
      case .put(_, let id, let old):
        let now = current.rows[id]
        if old == nil, let now {
          // A row the step added (as it is at the end of the batch): the collector needs no
          // index for it unless an earlier step removed one.
          changes.stored(now, in: current.schema, existed: false)
        } else {
          changes.touched(id, in: current.schema, existed: old != nil, now: now)
        }
      case .added(_, let rows):
        // The rows as stored; a later step of the batch that changed one of them again comes
        // after this one and gives the collector what the row holds in the end.
        for row in rows { changes.stored(row, in: current.schema, existed: false) }
      }
    }
    return summary
  }

  private mutating func apply(_ changes: ChangeSet, undo: inout [UndoStep]) throws -> ChangeSummary {
    var summary = ChangeSummary()
    var current: Target?
    for precondition in changes.preconditions {
      try precondition.verify(try selected(precondition.query), store: storeName)
    }
    do {
      for operation in changes.operations {
        let entity = operation.entity
        if current?.entity != entity {
          guard let place = tables.index(forKey: entity) else { throw unknownEntity(entity) }
          let schema = tables.values[place].schema
          current = Target(
            entity: entity, schema: schema, reshape: try changes.reshaper(for: schema, store: storeName),
            place: place)
        }
        guard let current else { continue }
        try apply(operation, to: current, undo: &undo, summary: &summary)
      }
    } catch {
      rollBack(undo)
      throw error
    }
    return summary
  }

  /// Adds a row in its entity's current layout, refused as a batch's insert is (a taken id,
  /// a unique value another row holds), with nothing to undo: what a migration's editor adds
  /// row by row to a copy it keeps only if the whole step succeeds.
  mutating func insert(_ row: Row, into entity: String) throws {
    let schema = try table(entity).schema
    let id = row[schema.idPosition]
    if case .refused = try tables[entity]?.put(row, id: id, requiring: .absent, store: storeName) {
      throw duplicate(schema, id)
    }
  }

  /// How to take back one change of a batch that fails later.
  private enum UndoStep {
    /// Put back what the row with this id was: `row`, or nothing.
    case put(entity: String, id: Value, row: Row?)
    /// Take out rows a large insert added: one step for them all, which holds no more than the
    /// rows the orders were given.
    case added(entity: String, rows: [Row])
  }

  private mutating func rollBack(_ undo: [UndoStep]) {
    for step in undo.reversed() {
      switch step {
      case .put(let entity, let id, let row): tables[entity]?.put(id, row)
      case .added(let entity, let rows):
        guard let idPosition = tables[entity]?.schema.idPosition else { continue }
        for row in rows.reversed() { tables[entity]?.put(row[idPosition], nil) }
      }
    }
  }

  /// The entity a batch's operations change, while they change the same one.
  private struct Target {
    let entity: String
    let schema: EntitySchema
    let reshape: RowReshaper
    /// The table's place in ``tables``: changes go through it, so the table is neither looked up
    /// nor copied for each row (the dictionary's getter would copy it).
    let place: [String: InMemoryTable].Index
  }

  private mutating func apply(
    _ operation: ChangeSet.Operation, to target: Target, undo: inout [UndoStep], summary: inout ChangeSummary
  ) throws {
    let (entity, schema, reshape, place) = (target.entity, target.schema, target.reshape, target.place)
    switch operation {
    case .insertMany(_, let rows):
      // Each row is made, checked and stored before the next is asked for, so the first
      // failing row decides the error. Room for them all first: growing the table step by
      // step would hash every id again at each step.
      let stored = tables.values[place].rows.count
      tables.values[place].rows.reserveCapacity(stored + rows.count)
      // Many rows against those stored go into the index orders together at the end, and are
      // undone together.
      if rows.count >= 64, rows.count * 2 >= stored {
        let added = try tables.values[place].storeUnordered(rows, reshape: reshape, store: storeName)
        tables.values[place].addToOrders(added)
        summary.inserted += added.count
        undo.append(.added(entity: entity, rows: added))
      } else {
        for position in 0..<rows.count {
          try store(
            reshape(try rows.row(at: position)), requiring: .absent, in: target, undo: &undo,
            summary: &summary)
        }
      }
    case .insert(_, let made), .update(_, let made), .upsert(_, let made):
      let presence: InMemoryTable.Presence =
        switch operation {
        case .insert: .absent
        case .update: .present
        default: .either
        }
      try store(reshape(made), requiring: presence, in: target, undo: &undo, summary: &summary)
    case .delete(_, let id):
      if let old = tables.values[place].put(id, nil) {
        undo.append(.put(entity: entity, id: id, row: old))
        summary.deleted += 1
      }
    case .deleteMatching(_, let filter):
      let compiled = try CompiledFilter(filter, schema: schema)
      let doomed = try matching(filter, compiled, in: tables.values[place]).map { $0[schema.idPosition] }
      for id in doomed {
        let old = tables.values[place].put(id, nil)
        undo.append(.put(entity: entity, id: id, row: old))
      }
      summary.deleted += doomed.count
    case .updateMatching(_, let filter, let changes):
      let compiled = try CompiledFilter(filter, schema: schema)
      let updates = try CompiledFieldUpdates(changes, schema: schema)
      // In id order, as every backend goes, so the same row fails first everywhere.
      let matched = try matching(filter, compiled, in: tables.values[place])
        .sorted { ValueOrder.compare($0[schema.idPosition], $1[schema.idPosition]) < 0 }
      for row in matched {
        try store(
          try updates.apply(to: row, store: storeName), requiring: .present, in: target, undo: &undo,
          summary: &summary)
      }
    }
  }

  /// Stores one row of an insert, an update or an upsert, refused unless its id's presence is
  /// as `presence` asks, and records how to undo it.
  private mutating func store(
    _ row: Row, requiring presence: InMemoryTable.Presence, in target: Target, undo: inout [UndoStep],
    summary: inout ChangeSummary
  ) throws {
    let id = row[target.schema.idPosition]
    switch try tables.values[target.place].put(row, id: id, requiring: presence, store: storeName) {
    case .refused(existed: true): throw duplicate(target.schema, id)
    case .refused(existed: false):
      throw CofferError.nothingToUpdate(entity: target.schema.name, id: id, store: storeName)
    case .stored(let old):
      undo.append(.put(entity: target.entity, id: id, row: old))
      if old != nil { summary.updated += 1 } else { summary.inserted += 1 }
    }
  }

  /// Hands over the rows a query selects (see ``StorageBackend/read(_:_:)``).
  /// A lookup by id (see ``Query/lookedUpIDs(in:)``) reads the ids directly, with no ordering.
  public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) throws {
    let table = try table(query.entity)
    if let id = query.lookedUpID(in: table.schema) {
      if let row = try row(id, of: table, as: query.layout) { try visit(RowFields(row)) }
      return
    }
    if query.readsEveryRowInIDOrder(of: table.schema) {
      // A scan hands each row over as the walk of the id order reaches it, rather than
      // gathering every row first and reading each a second time.
      let reshape = try RowReshaper(reading: table.schema, as: query.layout, store: storeName)
      let fields = RowFields(Row([]))
      try table.orders[0].forEach(in: .all) { row in
        fields.current = reshape.isIdentity ? row : reshape(row)
        try visit(fields)
        return true
      }
      return
    }
    try RowFields.handOver(try selected(query), to: visit)
  }

  /// Reads a lookup of one id (see ``Query/lookedUpID(in:)``): what a backend holding these
  /// tables behind a lock calls under it, so that a point read takes no snapshot.
  ///
  /// - Returns: `false` for any other query, leaving `found` alone; otherwise `true`, with
  ///   `found` set to the row in the layout the query asks for, or `nil` when the id is not
  ///   stored.
  public func lookUp(_ query: Query, found: inout Row?) throws -> Bool {
    let table = try table(query.entity)
    guard let id = query.lookedUpID(in: table.schema) else { return false }
    found = try row(id, of: table, as: query.layout)
    return true
  }

  /// The row of `table` with an id, in `layout`, or `nil` when the id is not stored.
  private func row(_ id: Value, of table: InMemoryTable, as layout: EntitySchema?) throws -> Row? {
    guard let row = table.rows[id] else { return nil }
    let reshape = try RowReshaper(reading: table.schema, as: layout, store: storeName)
    return reshape.isIdentity ? row : reshape(row)
  }

  /// The rows a query selects, straight from the table for a lookup by id.
  private func selected(_ query: Query) throws -> [Row] {
    let table = try table(query.entity)
    guard let ids = query.lookedUpIDs(in: table.schema) else { return try fetch(query) }
    return try reshaped(ids.compactMap { table.rows[$0] }, of: table, as: query.layout)
  }

  /// The rows a query selects (see ``StorageBackend/read(_:_:)``).
  public func fetch(_ query: Query) throws -> [Row] {
    let table = try table(query.entity)
    if let slice = try table.plannedSlice(query) {
      return try reshaped(slice, of: table, as: query.layout)
    }
    let ordering = try RowOrdering(query.sort, schema: table.schema)
    let rows = ordering.orderedSlice(
      try matching(query.filter, in: table), offset: query.offset, limit: query.limit)
    return try reshaped(rows, of: table, as: query.layout)
  }

  /// Rows of a table in the layout a reader asked for (see ``Query/layout``).
  private func reshaped(_ rows: [Row], of table: InMemoryTable, as layout: EntitySchema?) throws -> [Row] {
    let reshape = try RowReshaper(reading: table.schema, as: layout, store: storeName)
    return reshape.isIdentity ? rows : rows.map { reshape($0) }
  }

  /// The number of rows a query's filter selects (see ``StorageBackend/count(_:)``).
  public func count(_ query: Query) throws -> Int {
    try matchCount(query.filter, in: try table(query.entity))
  }

  /// How many rows match, without gathering them.
  private func matchCount(_ filter: Filter, in table: InMemoryTable) throws -> Int {
    let idField = table.schema.idField.name
    switch filter {
    case .all:
      return table.rows.count
    case .compare(idField, .equal, let id) where !id.isNull:
      return table.rows[id] == nil ? 0 : 1
    case .isIn(idField, let ids):
      return Set(ids).count { table.rows[$0] != nil }
    default:
      let compiled = try CompiledFilter(filter, schema: table.schema)
      if let count = table.indexedCount(filter, compiled) { return count }
      return table.rows.values.count(where: compiled.matches)
    }
  }

  private func matching(_ filter: Filter, in table: InMemoryTable) throws -> [Row] {
    let idField = table.schema.idField.name
    switch filter {
    case .all:
      return Array(table.rows.values)
    case .compare(idField, .equal, let id) where !id.isNull:
      return table.rows[id].map { [$0] } ?? []
    case .isIn(idField, let ids):
      return Set(ids).compactMap { table.rows[$0] }
    default:
      return try matching(filter, try CompiledFilter(filter, schema: table.schema), in: table)
    }
  }

  /// The rows that match, read from the index range that holds them when one does.
  private func matching(_ filter: Filter, _ compiled: CompiledFilter, in table: InMemoryTable) throws -> [Row]
  {
    if let candidates = table.candidates(for: filter) { return candidates.filter(compiled.matches) }
    return table.rows.values.filter(compiled.matches)
  }

  private func table(_ entity: String) throws -> InMemoryTable {
    guard let table = tables[entity] else { throw unknownEntity(entity) }
    return table
  }

  private func unknownEntity(_ entity: String) -> CofferError {
    CofferError(
      .unknownEntity,
      "Entity '\(entity)' was never prepared in this store. Prepare it first (Store does this for you).",
      store: storeName, entity: entity)
  }

  private func duplicate(_ schema: EntitySchema, _ id: Value) -> CofferError {
    CofferError.idAlreadyStored(entity: schema.name, id: id, store: storeName)
  }
}

/// The tables as they are, read as one state: a copy is a snapshot (see ``SnapshotReading/withSnapshot(_:)``).
extension InMemoryTables: StorageSnapshot {}
