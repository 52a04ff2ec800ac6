import CLMDB
@_spi(Backend) import Coffer
import Synchronization

extension LMDBBackend {
  /// Creates the databases of new entities and evolves stored ones, all in one write
  /// transaction: either every schema is prepared or nothing changes. Then lists every entity
  /// the catalog records.
  ///
  /// An evolved entity's rows are rewritten under the new schema when its fields changed, and
  /// its indexes are rebuilt from the rows (checking unique ones).
  ///
  /// A prepare that fails leaves every entity usable: dropping an old index database closes its
  /// handle at once, even when the transaction is then aborted, so the entities' handles are
  /// opened again from the (unchanged) catalog.
  @discardableResult
  public func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    try checkOpen()
    do {
      if !schemas.isEmpty {
        try await writeHandles { transaction in try schemas.map { try prepare($0, in: transaction) } }
      }
      return try environment.read { try Catalog.schemas(in: $0, catalog: catalog) }
    } catch {
      let current = entities.withLock { $0.values.map(\.schema) }
      if !current.isEmpty {
        try? await writeHandles { transaction in try current.map { try prepare($0, in: transaction) } }
      }
      throw error
    }
  }

  /// Runs `body` in a write transaction and, once it commits, publishes the handles it made
  /// while still holding the writer lock.
  ///
  /// When the body changed an entity's catalog entry, the store's schema generation moves on in
  /// the same transaction, so that other processes' handles of the entity are checked (and made
  /// again from the catalog) before their next batch: see ``checkHandlesCurrent(for:in:)``.
  private func writeHandles(_ body: @Sendable (Transaction) throws -> [(EntityHandle, changed: Bool)])
    async throws
  {
    try await environment.writeOffPool(
      { transaction in
        let prepared = try body(transaction)
        guard prepared.contains(where: \.changed) else {
          return PreparedHandles(handles: prepared.map(\.0), generations: nil)
        }
        let before = try Catalog.generation(in: transaction, catalog: catalog)
        try Catalog.write(generation: before &+ 1, in: transaction, catalog: catalog)
        return PreparedHandles(handles: prepared.map(\.0), generations: (before, before &+ 1))
      },
      committed: { prepared in
        entities.withLock { entities in
          for handle in prepared.handles { entities[handle.schema.name] = handle }
        }
        // This handle's others are as current as before.
        if let (before, after) = prepared.generations {
          _ = generation.compareExchange(expected: before, desired: after, ordering: .acquiringAndReleasing)
        }
      })
  }

  /// Prepares one entity in `transaction`; returns its handle and whether its catalog entry
  /// changed.
  private func prepare(_ schema: EntitySchema, in transaction: Transaction) throws -> (
    EntityHandle, changed: Bool
  ) {
    let context = transaction.context
    let names = try Catalog.databaseNames(for: schema, context: context)
    guard var record = try Catalog.record(schema.name, in: transaction, catalog: catalog) else {
      // A name another entity's databases have (a relabelled or dropped one's) gets a suffix.
      let rowsName = try Catalog.unusedName(names.rows, entity: schema.name, in: transaction)
      let indexNames = try Catalog.unusedNames(names.indexes, entity: schema.name, in: transaction)
      guard let rows = try transaction.open(rowsName, flags: MDB_CREATE) else {
        throw context.error(MDB_NOTFOUND, "create the database of \(schema.name)", entity: schema.name)
      }
      let indexes = try openIndexes(schema, indexNames, in: transaction)
      let record = Catalog.EntityRecord(
        layouts: [schema], current: 0, rows: rowsName, indexes: indexNames)
      try Catalog.write(record, for: schema.name, in: transaction, catalog: catalog)
      return (EntityHandle(schema: schema, layout: 0, rows: rows, indexes: indexes, evolutions: [:]), true)
    }
    guard let rows = try transaction.open(record.rows, flags: 0) else {
      throw CofferError(
        .corruptStore, "The rows database of \(schema.name) is missing. Restore the store from a backup.",
        store: name, entity: schema.name, path: path)
    }
    let stored = record.layouts[record.current]
    if stored == schema {
      let indexes = try openIndexes(schema, record.indexes, in: transaction)
      let handle = EntityHandle(
        schema: schema, layout: record.current, rows: rows, indexes: indexes,
        evolutions: evolutions(record, to: schema, except: record.current))
      return (handle, false)
    }
    _ = try SchemaEvolution(from: stored, to: schema, store: name)
    // A layout is a field list: a schema that changes only its indexes keeps its rows' layout.
    let layout = record.layouts.firstIndex { $0.fields == schema.fields } ?? record.layouts.count
    if layout == record.layouts.count {
      record.layouts.append(schema)
    } else {
      record.layouts[layout] = schema
    }
    // An index the stored schema has keeps its database (whatever its name: a relabelled
    // entity's are named after its old names); the others get one no database has.
    let kept = schema.orderedIndexes.map { index in
      stored.orderedIndexes.firstIndex(of: index).map { record.indexes[$0] }
    }
    for old in record.indexes where !kept.contains(old) {
      if let database = try transaction.open(old, flags: MDB_DUPSORT) {
        try transaction.drop(database, delete: true)
      }
    }
    var indexNames: [String] = []
    for (base, reused) in zip(names.indexes, kept) {
      indexNames.append(
        try reused ?? Catalog.unusedName(base, entity: schema.name, taken: Set(indexNames), in: transaction))
    }
    let indexes = try openIndexes(schema, indexNames, in: transaction)
    for index in indexes { try transaction.drop(index.database, delete: false) }
    let handle = EntityHandle(
      schema: schema, layout: layout, rows: rows, indexes: indexes,
      evolutions: evolutions(record, to: schema, except: layout))
    try rebuild(handle, rewrite: stored.fields != schema.fields, in: transaction)
    record.current = layout
    record.indexes = indexNames
    try Catalog.write(record, for: schema.name, in: transaction, catalog: catalog)
    return (handle, true)
  }

  /// Opens (creating) an entity's index databases.
  private func openIndexes(_ schema: EntitySchema, _ names: [String], in transaction: Transaction) throws
    -> [IndexHandle]
  {
    try zip(schema.orderedIndexes, names).map { index, databaseName in
      guard let database = try transaction.open(databaseName, flags: MDB_CREATE | MDB_DUPSORT) else {
        throw transaction.context.error(MDB_NOTFOUND, "create the index \(databaseName)", entity: schema.name)
      }
      return IndexHandle(
        index: index, positions: index.fields.compactMap { schema.position(of: $0) }, database: database,
        name: databaseName)
    }
  }

  /// How each stored layout other than `except` reads as `schema`.
  func evolutions(_ record: Catalog.EntityRecord, to schema: EntitySchema, except: Int) -> [Int:
    OlderLayout?]
  {
    var evolutions: [Int: OlderLayout?] = [:]
    for (layout, stored) in record.layouts.enumerated() where layout != except {
      evolutions[layout] = .some(OlderLayout(layout, stored: stored, as: schema, store: name))
    }
    return evolutions
  }

  /// Reads every row in the new shape, rewrites it under the new layout when `rewrite` is set,
  /// and fills the (emptied) indexes.
  private func rebuild(_ handle: EntityHandle, rewrite: Bool, in transaction: Transaction) throws {
    var rows: [(key: [UInt8], values: [Value])] = []
    let all = try QueryPlan(Query(entity: handle.schema.name), handle: handle)
    try scan(all, handle: handle, in: transaction) { key, values in
      rows.append((Array(key), values))
      return true
    }
    var buffer = Scratch()
    for row in rows {
      if rewrite {
        Self.encode(row.values, handle: handle, into: &buffer.row)
        try transaction.put(handle.rows, row.key, buffer.row)
      }
      for index in handle.indexes {
        do {
          try index.add(
            row.values, idKey: row.key, schema: handle.schema, key: &buffer.index, in: transaction)
        } catch let error as CofferError where error.code == .uniqueViolation {
          // Name the row every backend names, not the first one met in key order.
          let clash = UniqueClash.smallest(in: rows.map { Row($0.values) }, schema: handle.schema)
          throw clash?.error(entity: handle.schema.name, store: name) ?? error
        }
      }
    }
  }
}

/// What ``LMDBBackend/prepare(_:)`` made in its transaction: the handles to publish, and the
/// store's schema generation before and after when it changed.
struct PreparedHandles: Sendable {
  let handles: [EntityHandle]
  let generations: (before: UInt64, after: UInt64)?
}
