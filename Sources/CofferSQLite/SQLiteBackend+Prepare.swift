@_spi(Backend) import Coffer
import CofferSQL
import Logging

extension SQLiteBackend {
  /// Creates the tables of new entities and evolves stored ones, in one transaction: new fields
  /// become new columns (filled with their defaults), new indexes are built, indexes no longer
  /// declared are dropped. Columns of fields no longer declared are kept, with their data.
  ///
  /// - Throws: ``Coffer/CofferError/Code/schemaMismatch`` naming entity, field, stored and new
  ///   kinds when a field changed type (nothing changes), or
  ///   ``Coffer/CofferError/Code/uniqueViolation`` when a new unique index does not hold for the
  ///   stored rows.
  @discardableResult
  public func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    let known = catalog.withLock { catalog in schemas.allSatisfy { catalog.tables[$0.name]?.schema == $0 } }
    if known {
      try checkOpen()
    } else {
      try await create(schemas)
    }
    return try readers.withReader { try SQLiteCatalog.schemas(on: $0) }
  }

  /// Creates or evolves the entities' tables in one transaction and publishes them.
  private func create(_ schemas: [EntitySchema]) async throws {
    try await blocking.run { [self] in
      try withWriter { connection in
        let prepared = try transaction(on: connection, while: "preparing entities") {
          try SQLiteCatalog.create(on: connection)
          return try schemas.map { try prepareEntity($0, on: connection) }
        }
        // Still under the writer lock, so no batch is applied between the commit and this.
        catalog.withLock { catalog in
          for table in prepared where catalog.tables[table.schema.name]?.schema != table.schema {
            catalog.tables[table.schema.name] = table.numbered(catalog.nextSerial)
            catalog.nextSerial += 1
          }
        }
      }
    }
  }

  private func prepareEntity(_ schema: EntitySchema, on connection: SQLiteConnection) throws -> SQLiteTable {
    guard let record = try SQLiteCatalog.read(schema.name, on: connection) else {
      return try createEntity(schema, on: connection)
    }
    if record.schema == schema {
      let table = SQLiteTable(schema: schema, tableName: record.tableName, columnNames: record.columns)
      // A store made before SQLite had text indexes recorded them without their FTS5 tables.
      if !schema.textIndexedFields.isEmpty { try SQLiteTextIndex.sync(table, on: connection, creating: true) }
      return table
    }
    let evolution = try SchemaEvolution(from: record.schema, to: schema, store: name)
    let table = SQLIdentifier.quoted(record.tableName)
    var physical = try SQLiteCatalog.columnNames(of: record.tableName, on: connection)
    var columns: [String] = []
    var uniqueDropped = false
    for (field, source) in zip(schema.fields, evolution.sources) {
      if let source {
        let column = record.columns[source]
        if record.schema.fields[source].isOptional, !field.isOptional, let value = field.defaultValue {
          // Filling nulls with the default may give rows the same unique value: drop the unique
          // indexes first, so that rebuilding them below reports the clash as every backend does.
          if !uniqueDropped {
            uniqueDropped = true
            for index in try SQLiteIndex.indexes(of: record.tableName, on: connection) where index.isUnique {
              try connection.execute("DROP INDEX \(SQLIdentifier.quoted(index.name))")
            }
          }
          let quoted = SQLIdentifier.quoted(column)
          try connection.run("UPDATE \(table) SET \(quoted) = ?1 WHERE \(quoted) IS NULL", [value])
        }
        columns.append(column)
        continue
      }
      let column = SQLiteIdentifier.fresh(for: field.name, avoiding: physical)
      physical.insert(SQLiteIdentifier.folded(column))
      let quoted = SQLIdentifier.quoted(column)
      // The default fills the column of rows another process inserts with an older schema,
      // which names only the columns it knows.
      let value = field.defaultValue.flatMap { $0.isNull ? nil : SQLiteLiteral.sql($0) }
      try connection.execute(
        "ALTER TABLE \(table) ADD COLUMN \(quoted) \(SQLiteTable.columnType(field.kind))"
          + (value.map { " DEFAULT \($0)" } ?? ""))
      if let value = field.defaultValue, !value.isNull {
        try connection.run("UPDATE \(table) SET \(quoted) = ?1", [value])
      }
      columns.append(column)
    }
    let prepared = SQLiteTable(schema: schema, tableName: record.tableName, columnNames: columns)
    try syncIndexes(of: prepared, on: connection)
    logger.info(
      "Evolved an entity's table",
      metadata: [
        "coffer.entity": .string(schema.name), "coffer.table": .string(record.tableName),
        "coffer.addedColumns": .stringConvertible(evolution.sources.count { $0 == nil }),
      ])
    try SQLiteCatalog.write(
      .init(schema: schema, tableName: record.tableName, columns: columns), on: connection)
    return prepared
  }

  /// With `deferringPlainIndexes`, only the unique indexes are made: a caller about to fill the
  /// table makes the others afterwards with ``syncIndexes(of:on:creating:)``, which builds each
  /// from sorted keys instead of growing it row by row.
  func createEntity(
    _ schema: EntitySchema, on connection: SQLiteConnection, deferringPlainIndexes: Bool = false
  ) throws -> SQLiteTable {
    let tableName = SQLiteIdentifier.fresh(
      for: schema.name, avoiding: try SQLiteCatalog.takenNames(on: connection))
    logger.debug(
      "Creating an entity's table",
      metadata: ["coffer.entity": .string(schema.name), "coffer.table": .string(tableName)])
    let (columns, definitions) = SQLiteDialect.newColumns(for: schema, idConstraint: " PRIMARY KEY NOT NULL")
    // An Int64 id is the rowid itself; a string or UUID id is the key of a table without rowid,
    // so that a get or a scan in id order reads one b-tree, not an index and then the table.
    let options = schema.idField.kind == .int ? "STRICT" : "STRICT, WITHOUT ROWID"
    try connection.execute(
      "CREATE TABLE \(SQLIdentifier.quoted(tableName)) (\(definitions.joined(separator: ", "))) \(options)"
    )
    let table = SQLiteTable(schema: schema, tableName: tableName, columnNames: columns)
    try syncIndexes(of: table, on: connection, creating: deferringPlainIndexes ? \.isUnique : { _ in true })
    try SQLiteCatalog.write(.init(schema: schema, tableName: tableName, columns: columns), on: connection)
    return table
  }

  /// Makes the table's indexes those the schema declares, matched by definition (unique or
  /// not, the columns in order), not by name: a relabel leaves an index under a name that holds
  /// the table's or a column's former name (see ``SQLiteIndex``). Coffer's indexes that hold no
  /// declared index are dropped; a declared index that none holds is created, named
  /// `TABLE/index/COLUMNS` or `TABLE/unique/COLUMNS` unless another table or index has that
  /// name, then with a `_2`, `_3` … suffix. Of the missing indexes, only those `creating`
  /// accepts are made. Text indexes are kept in step as ``SQLiteTextIndex`` says.
  func syncIndexes(
    of table: SQLiteTable, on connection: SQLiteConnection, creating: (Index) -> Bool = { _ in true }
  ) throws {
    let wanted = SQLiteIndex.wanted(by: table.schema, tableName: table.tableName, columns: table.columnNames)
    let match = SQLiteIndex.match(wanted, with: try SQLiteIndex.indexes(of: table.tableName, on: connection))
    for index in match.undeclared {
      try connection.execute("DROP INDEX \(SQLIdentifier.quoted(index.name))")
    }
    try SQLiteTextIndex.sync(
      table, on: connection, creating: table.schema.indexes.contains { $0.isText && creating($0) })
    let missing = match.declared.filter { $0.index == nil && creating($0.wanted.index) }.map(\.wanted)
    if missing.isEmpty { return }
    var taken = try SQLiteCatalog.takenNames(on: connection)
    for entry in missing.sorted(by: { $0.usualName < $1.usualName }) {
      let indexName = SQLiteIdentifier.fresh(for: entry.usualName, avoiding: taken)
      taken.insert(SQLiteIdentifier.folded(indexName))
      let sql =
        "CREATE \(entry.index.isUnique ? "UNIQUE " : "")INDEX \(SQLIdentifier.quoted(indexName)) ON "
        + "\(table.table) (\(entry.columns.map(SQLIdentifier.quoted).joined(separator: ", ")))"
      do {
        try connection.execute(sql)
      } catch let error as CofferError where error.code == .backendFailure && entry.index.isUnique {
        throw uniqueClash(in: table, on: connection, failed: entry.index, underlying: error)
      }
    }
  }
}
