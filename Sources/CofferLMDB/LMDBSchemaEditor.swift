import CLMDB
@_spi(Backend) import Coffer

/// The ``Coffer/SchemaEditor`` of an LMDB store: every primitive works in the one write
/// transaction ``LMDBBackend/editSchema(_:)`` runs its body in, on the catalog (`coffer`) and
/// the entities' databases.
///
/// The editor opens its own handles for the entities it touches, from the catalog as this
/// transaction sees it; the backend's handles change only once the transaction commits.
///
/// When the map fills up, every primitive throws (a signal the body cannot mistake for its own
/// error) and the editor remembers it, so that the transaction is retried on a larger map even
/// when the body caught the error.
final class LMDBSchemaEditor: SchemaEditor {
  private let backend: LMDBBackend
  private let transaction: Transaction
  /// Handles opened in this transaction, by entity name.
  private var handles: [String: EntityHandle] = [:]
  /// The entities created, dropped or relabelled (by old and new name): their handles are the
  /// ones the backend replaces after the commit.
  private(set) var touched: Set<String> = []
  /// Whether the map filled up: the transaction can do nothing more and is retried.
  private(set) var filledMap = false
  private var isOpen = true
  private var buffer = Scratch()
  /// The feed's database, once a step's rows were recorded in it.
  private(set) var recordedFeed: MDB_dbi?

  init(backend: LMDBBackend, transaction: Transaction) {
    self.backend = backend
    self.transaction = transaction
  }

  /// Ends the editor's use: its transaction commits or aborts next.
  func finish() { isOpen = false }

  func schemas() throws -> [EntitySchema] {
    try edit { try Catalog.schemas(in: transaction, catalog: backend.catalog) }
  }

  func scan(_ entity: String, _ visit: (any StoredFields) throws -> Void) throws {
    try edit {
      let handle = try handle(entity)
      let query = Query(entity: entity)
      let plan = try QueryPlan(query, handle: handle)
      try backend.readInOrder(query, plan: plan, handle: handle, in: transaction, visit)
    }
  }

  func create(_ schema: EntitySchema) throws {
    try edit {
      guard try record(schema.name) == nil else {
        throw CofferError(
          .invalidSchema,
          "Entity '\(schema.name)' is already stored; drop or relabel it first, or create the entity under "
            + "another name.",
          store: backend.name, entity: schema.name, path: backend.path)
      }
      let context = transaction.context
      let bases = try Catalog.databaseNames(for: schema, context: context)
      let rows = try Catalog.unusedName(bases.rows, entity: schema.name, in: transaction)
      let indexes = try Catalog.unusedNames(bases.indexes, entity: schema.name, in: transaction)
      for name in [rows] + indexes {
        let flags = name == rows ? MDB_CREATE : MDB_CREATE | MDB_DUPSORT
        guard try transaction.open(name, flags: flags) != nil else {
          throw context.error(MDB_NOTFOUND, "create the database \(name)", entity: schema.name)
        }
      }
      let record = Catalog.EntityRecord(layouts: [schema], current: 0, rows: rows, indexes: indexes)
      try Catalog.write(record, for: schema.name, in: transaction, catalog: backend.catalog)
      forget(schema.name)
    }
  }

  func insert(_ row: Row, into entity: String) throws {
    try edit {
      let handle = try handle(entity)
      let values: [Value]
      do {
        values = try QueryValidator.validate(row, schema: handle.schema).values
      } catch let error as CofferError {
        throw error.inStore(backend.name)
      }
      try backend.insert(values, handle: handle, buffer: &buffer, in: transaction)
    }
  }

  /// One walk of the source's rows in id order, appending each to the target's empty rows
  /// database (`MDB_APPEND`) with its index entries. A row of the source's current layout is
  /// rewritten byte for byte, only the converted values re-encoded (int to string, bool to
  /// int); a row of an older layout is decoded, evolved and encoded. Any other conversion, a
  /// converted id or a target that holds rows leaves the copy to the caller.
  func copyRows(
    from source: String, into target: String, converting conversions: [Int: FieldConversion.BuiltIn]
  )
    throws -> Int?
  {
    try edit {
      let from = try handle(source)
      let into = try handle(target)
      guard let plan = RowRewrite(from: from.schema, into: into.schema, converting: conversions),
        try transaction.entryCount(into.rows) == 0
      else { return nil }
      var copied = 0
      var idKey: [UInt8] = []
      var indexKey: [UInt8] = []
      var values = [Value](repeating: .null, count: into.schema.fields.count)
      try transaction.withCursor(from.rows) { cursor in
        var more = try cursor.move(MDB_FIRST)
        while more {
          idKey.removeAll(keepingCapacity: true)
          idKey.append(contentsOf: cursor.key)
          try plan.rewrite(
            cursor.data, key: cursor.key, from: from, into: into, backend: backend, in: transaction,
            output: &buffer.row, values: &values)
          guard try transaction.put(into.rows, idKey, buffer.row, flags: MDB_APPEND) else {
            throw CofferError(
              .backendFailure, "Copying the rows of \(source) met an id out of order; nothing was changed.",
              store: backend.name, entity: source, path: backend.path)
          }
          for index in into.indexes {
            try index.add(values, idKey: idKey, schema: into.schema, key: &indexKey, in: transaction)
          }
          copied += 1
          more = try cursor.move(MDB_NEXT)
        }
      }
      return copied
    }
  }

  func drop(_ entity: String) throws {
    try edit {
      guard let record = try record(entity) else { throw unknown(entity) }
      try Catalog.retire(record.rows, in: transaction, catalog: backend.catalog, flags: 0)
      for index in record.indexes {
        try Catalog.retire(index, in: transaction, catalog: backend.catalog, flags: MDB_DUPSORT)
      }
      try transaction.delete(backend.catalog, Catalog.key(entity))
      forget(entity)
    }
  }

  func relabel(_ entity: String, as schema: EntitySchema) throws {
    try edit {
      guard let record = try record(entity) else { throw unknown(entity) }
      try record.layouts[record.current].checkRelabel(as: schema, store: backend.name)
      if schema.name != entity, try self.record(schema.name) != nil {
        throw CofferError(
          .invalidSchema,
          "Entity '\(entity)' cannot be renamed '\(schema.name)': an entity of that name is stored. Drop or rename "
            + "that one first.",
          store: backend.name, entity: entity, path: backend.path)
      }
      let relabelled = try record.relabelled(as: schema)
      if schema.name != entity { try transaction.delete(backend.catalog, Catalog.key(entity)) }
      try Catalog.write(relabelled, for: schema.name, in: transaction, catalog: backend.catalog)
      forget(entity)
      forget(schema.name)
    }
  }

  func migrations() throws -> [MigrationRecord] {
    try edit { try Catalog.migrations(in: transaction, catalog: backend.catalog) }
  }

  func record(_ migration: MigrationRecord) throws {
    try edit { try Catalog.record(migration, in: transaction, catalog: backend.catalog) }
  }

  /// The handles the backend keeps for the touched entities once the transaction commits:
  /// `nil` for an entity no longer stored.
  func handlesToPublish() throws -> [String: EntityHandle?] {
    var published: [String: EntityHandle?] = [:]
    for entity in touched {
      published[entity] = .some(try record(entity).map { try backend.openHandle($0, in: transaction) })
    }
    return published
  }

  /// Runs a primitive: refuses once the editor ended or the map filled, and notes a full map.
  private func edit<T>(_ work: () throws -> T) throws -> T {
    guard isOpen else {
      throw CofferError(
        .closed,
        "A schema editor was used after the body of editSchema returned; use it only inside the body.",
        store: backend.name, path: backend.path)
    }
    if filledMap { throw MapFullSignal() }
    do {
      return try work()
    } catch let signal as MapFullSignal {
      filledMap = true
      throw signal
    }
  }

  /// The catalog entry of an entity as this transaction sees it.
  private func record(_ entity: String) throws -> Catalog.EntityRecord? {
    try Catalog.record(entity, in: transaction, catalog: backend.catalog)
  }

  /// The handle of a stored entity, in its stored schema, opened in this transaction.
  private func handle(_ entity: String) throws -> EntityHandle {
    if let handle = handles[entity] { return handle }
    guard let record = try record(entity) else { throw unknown(entity) }
    let handle = try backend.openHandle(record, in: transaction)
    handles[entity] = handle
    return handle
  }

  /// Forgets the handle of an entity whose databases or schema changed.
  private func forget(_ entity: String) {
    handles[entity] = nil
    touched.insert(entity)
  }

  private func unknown(_ entity: String) -> CofferError {
    CofferError(
      .unknownEntity,
      "Entity '\(entity)' is not stored in this store; check the name against the stored entities.",
      store: backend.name, entity: entity, path: backend.path)
  }
}

extension LMDBSchemaEditor: ChangeRecordingEditor {
  func recordsChanges() throws -> Bool {
    try edit { try backend.feed.database(in: transaction, catalog: backend.catalog) != nil }
  }

  /// Records the step's rows as the next batch of the feed, in the step's write transaction.
  func recordChanges(_ changes: ChangeCollector) throws {
    try edit {
      guard let database = try backend.feed.database(in: transaction, catalog: backend.catalog) else {
        return
      }
      try backend.feed.record(changes, in: database, catalog: backend.catalog, transaction: transaction)
      recordedFeed = database
    }
  }
}
