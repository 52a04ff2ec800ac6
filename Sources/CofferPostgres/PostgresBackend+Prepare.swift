@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import Logging
import PostgresNIO

extension PostgresBackend {
  /// Creates the tables of new entities and evolves stored ones, in one transaction under an
  /// advisory lock on the store's schema, so that processes opening the same store at once take
  /// turns: new fields become new columns (with their defaults, which also fill rows that
  /// writers of the old layout insert later), new indexes are built, indexes no longer declared
  /// are dropped. Columns of fields no longer declared are kept, with their data.
  ///
  /// - Throws: ``Coffer/CofferError/Code/schemaMismatch`` naming entity, field, stored and new
  ///   kinds when a field changed type, or when a table's column was changed to another type
  ///   behind Coffer's back (nothing changes);
  ///   ``Coffer/CofferError/Code/uniqueViolation`` when a new unique index does not hold for the
  ///   stored rows.
  @discardableResult
  public func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    try checkOpen()
    do {
      let known = tables.withLock { tables in schemas.allSatisfy { tables[$0.name]?.schema == $0 } }
      if !known {
        try await gate.exclusive {
          let prepared = try await pool.withConnection(while: "preparing entities") { connection in
            try await transaction(on: connection) { try await prepareEntities(schemas, on: connection) }
          }
          tables.withLock { tables in
            for table in prepared { tables[table.schema.name] = table }
          }
        }
      }
      return try await pool.withConnection(while: "listing entities") { [catalog] connection in
        guard try await catalog.exists(on: connection) else { return [] }
        return try await catalog.records(on: connection).values.map(\.schema).sorted {
          $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
        }
      }
    } catch {
      throw failure.error(error, while: "preparing entities")
    }
  }

  /// Runs `body` in a transaction, committing if it returns and rolling back if it throws.
  func transaction<R>(on connection: PostgresConnection, _ body: () async throws -> R) async throws -> R {
    try await run("BEGIN", on: connection)
    do {
      let result = try await body()
      try await run("COMMIT", on: connection)
      return result
    } catch {
      // After a lost connection nothing is sent on it again (the server rolls back by itself).
      if !PostgresFailure.isConnectionLoss(error), !connection.isClosed {
        _ = try? await run("ROLLBACK", on: connection)
      }
      throw error
    }
  }

  @discardableResult
  func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), on connection: PostgresConnection)
    async throws -> [PostgresRow]
  {
    try await connection.send(PostgresQuery(unsafeSQL: sql, binds: binds), logger: .disabled).collect()
  }

  private func prepareEntities(_ schemas: [EntitySchema], on connection: PostgresConnection) async throws
    -> [PostgresTable]
  {
    try await lockStore(on: connection)
    try await allowWrites(on: connection)
    try await ensureCatalog(on: connection)
    let records = try await catalog.records(on: connection)
    var prepared: [PostgresTable] = []
    for schema in schemas {
      prepared.append(try await prepareEntity(schema, record: records[schema.name], on: connection))
    }
    return prepared
  }

  /// Waits for, and takes until the transaction ends, the advisory lock on the store's schema:
  /// every process preparing or migrating the store takes turns here.
  func lockStore(on connection: PostgresConnection) async throws {
    var lock = PostgresBindings()
    lock.append(.string("coffer/" + configuration.schema), as: .string)
    try await run("SELECT pg_advisory_xact_lock(hashtext($1))", lock, on: connection)
  }

  /// Creates the store's schema, catalog and format tables when they are missing, and checks
  /// that an existing store is of a format this code writes.
  func ensureCatalog(on connection: PostgresConnection) async throws {
    var exists = PostgresBindings()
    exists.append(.string(configuration.schema), as: .string)
    if try await run("SELECT 1 FROM pg_catalog.pg_namespace WHERE nspname = $1", exists, on: connection)
      .isEmpty
    {
      try await run("CREATE SCHEMA \(catalog.namespace)", on: connection)
    }
    for statement in catalog.createStatements.dropFirst() { try await run(statement, on: connection) }
    if let version = try await catalog.version(on: connection) {
      if version > PostgresCatalog.formatVersion {
        throw CofferError(
          .corruptStore,
          "The store in schema '\(configuration.schema)' was written by a newer Coffer (format \(version)). It "
            + "was left untouched: open it with a newer Coffer.", store: name)
      }
    } else {
      try await run(
        "INSERT INTO \(catalog.formatTable) VALUES (\(PostgresCatalog.formatVersion))", on: connection)
    }
  }

  private func prepareEntity(
    _ schema: EntitySchema, record: PostgresCatalog.Record?, on connection: PostgresConnection
  ) async throws -> PostgresTable {
    guard let record else { return try await createEntity(schema, on: connection) }
    try await checkColumns(of: record, on: connection)
    if record.schema == schema {
      return PostgresTable(
        schema: schema, namespace: configuration.schema, tableName: record.tableName,
        columnNames: record.columns)
    }
    let evolution = try SchemaEvolution(from: record.schema, to: schema, store: name)
    let table = "\(catalog.namespace).\(SQLIdentifier.quoted(record.tableName))"
    var physical = Set(try await catalog.columnTypes(of: record.tableName, on: connection).keys)
    var columns: [String] = []
    var uniqueDropped = false
    for (field, source) in zip(schema.fields, evolution.sources) {
      if let source {
        let column = record.columns[source]
        let quoted = SQLIdentifier.quoted(column)
        if record.schema.fields[source].isOptional, !field.isOptional, let value = field.defaultValue {
          // Filling nulls with the default may give rows the same unique value: drop the
          // unique indexes first, so that rebuilding them reports the clash as every backend does.
          if !uniqueDropped {
            uniqueDropped = true
            for index in try await catalog.indexNames(of: record.tableName, on: connection).sorted()
            where index.hasPrefix(indexPrefix(record.tableName) + "unique/") {
              try await run(
                "DROP INDEX \(catalog.namespace).\(SQLIdentifier.quoted(index))", on: connection)
            }
          }
          var binds = PostgresBindings()
          binds.append(value, as: field.kind)
          try await run("UPDATE \(table) SET \(quoted) = $1 WHERE \(quoted) IS NULL", binds, on: connection)
          try await run(
            "ALTER TABLE \(table) ALTER COLUMN \(quoted) SET DEFAULT \(PostgresLiteral.sql(value, field.kind))",
            on: connection)
        }
        columns.append(column)
        continue
      }
      let column = PostgresIdentifier.fresh(for: field.name, avoiding: physical)
      physical.insert(column)
      var definition = "\(SQLIdentifier.quoted(column)) \(PostgresValues.columnType(field.kind))"
      if let value = field.defaultValue, !value.isNull {
        // Fills the stored rows, and rows that a process still on the old layout inserts later.
        definition += " DEFAULT \(PostgresLiteral.sql(value, field.kind))"
      }
      try await run("ALTER TABLE \(table) ADD COLUMN \(definition)", on: connection)
      columns.append(column)
    }
    let prepared = PostgresTable(
      schema: schema, namespace: configuration.schema, tableName: record.tableName, columnNames: columns)
    try await syncIndexes(of: prepared, on: connection)
    logger.info(
      "Evolved an entity's table",
      metadata: [
        "coffer.entity": .string(schema.name), "coffer.table": .string(record.tableName),
        "coffer.addedColumns": .stringConvertible(evolution.sources.count { $0 == nil }),
      ])
    try await catalog.write(
      .init(schema: schema, tableName: record.tableName, columns: columns), on: connection)
    return prepared
  }

  /// Throws when a stored entity's columns are missing or of another type than Coffer made
  /// them: the table was changed behind Coffer's back, and writing to it could lose data.
  private func checkColumns(of record: PostgresCatalog.Record, on connection: PostgresConnection) async throws
  {
    let types = try await catalog.columnTypes(of: record.tableName, on: connection)
    for (field, column) in zip(record.schema.fields, record.columns) {
      let expected = PostgresValues.reportedType(field.kind)
      guard let found = types[column] else {
        throw CofferError(
          .schemaMismatch,
          "The table '\(record.tableName)' of \(record.schema.name) has no column '\(column)' for field "
            + "'\(field.name)' any more; something other than Coffer changed it. Restore the column (\(expected)) "
            + "or the schema from a backup.",
          store: name, entity: record.schema.name, field: field.name)
      }
      guard found == expected else {
        throw CofferError(
          .schemaMismatch,
          "The column '\(column)' of table '\(record.tableName)' holds \(found), but Coffer stores field "
            + "'\(field.name)' of \(record.schema.name) as \(expected); something other than Coffer changed it. "
            + "Change the column back (nothing was dropped or converted).",
          store: name, entity: record.schema.name, field: field.name)
      }
    }
  }

  func createEntity(_ schema: EntitySchema, on connection: PostgresConnection) async throws
    -> PostgresTable
  {
    let taken = try await catalog.takenNames(on: connection)
    let tableName = PostgresIdentifier.fresh(for: schema.name, avoiding: taken)
    let made = PostgresDialect.newColumns(for: schema, idConstraint: " NOT NULL")
    let columns = made.names
    var definitions = made.definitions
    logger.debug(
      "Creating an entity's table",
      metadata: ["coffer.entity": .string(schema.name), "coffer.table": .string(tableName)])
    let key = PostgresIdentifier.fresh(for: tableName + "#id", avoiding: taken.union([tableName]))
    definitions.append(
      "CONSTRAINT \(SQLIdentifier.quoted(key)) PRIMARY KEY (\(SQLIdentifier.quoted(columns[schema.idPosition])))"
    )
    let table = PostgresTable(
      schema: schema, namespace: configuration.schema, tableName: tableName, columnNames: columns)
    try await run("CREATE TABLE \(table.table) (\(definitions.joined(separator: ", ")))", on: connection)
    try await guardIfRecording(table.table, on: connection)
    try await syncIndexes(of: table, on: connection)
    try await catalog.write(.init(schema: schema, tableName: tableName, columns: columns), on: connection)
    return table
  }

  /// The start of the name of every index Coffer makes on a table.
  func indexPrefix(_ tableName: String) -> String { tableName + "/" }

  /// The name of an index of a table: `TABLE/index/COLUMNS` or `TABLE/unique/COLUMNS`, shortened
  /// with a hash when that passes 63 bytes.
  func indexName(_ table: PostgresTable, _ index: Index) -> String {
    let names = index.fields.compactMap { table.schema.position(of: $0) }.map { table.columnNames[$0] }
    let full =
      indexPrefix(table.tableName) + (index.isUnique ? "unique/" : "index/") + names.joined(separator: ",")
    if full.utf8.count <= PostgresIdentifier.maximumBytes { return full }
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in full.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x100_0000_01b3
    }
    let suffix = "~" + String(hash, radix: 36)
    var prefix = ""
    for character in full {
      if prefix.utf8.count + String(character).utf8.count + suffix.utf8.count
        > PostgresIdentifier.maximumBytes
      {
        break
      }
      prefix.append(character)
    }
    return prefix + suffix
  }

  /// Makes the table's indexes those the schema declares; other indexes Coffer made on the
  /// table are dropped. A text index is none of them: until PostgreSQL has a text index of
  /// Coffer's, its searches read the rows.
  ///
  /// Every column is indexed `NULLS FIRST`: read forwards the index is in Coffer's ascending
  /// order (nulls first), read backwards in its descending order (nulls last), so a sorted page
  /// such as "the newest 50 of a thread" walks the index instead of sorting the rows.
  func syncIndexes(of table: PostgresTable, on connection: PostgresConnection) async throws {
    let existing = try await catalog.indexNames(of: table.tableName, on: connection)
    var wanted: [String: (index: Index, columns: [String])] = [:]
    for index in table.schema.orderedIndexes {
      wanted[indexName(table, index)] = (index, try index.fields.map { try table.column($0) })
    }
    let prefix = indexPrefix(table.tableName)
    for name in existing.sorted() where name.hasPrefix(prefix) && wanted[name] == nil {
      try await run("DROP INDEX \(catalog.namespace).\(SQLIdentifier.quoted(name))", on: connection)
    }
    for (indexName, entry) in wanted.sorted(by: { $0.key < $1.key }) where !existing.contains(indexName) {
      let sql =
        "CREATE \(entry.index.isUnique ? "UNIQUE " : "")INDEX \(SQLIdentifier.quoted(indexName)) ON "
        + "\(table.table) (\(entry.columns.map { "\($0) NULLS FIRST" }.joined(separator: ", ")))"
      guard entry.index.isUnique else {
        try await run(sql, on: connection)
        continue
      }
      try await run("SAVEPOINT coffer_index", on: connection)
      do {
        try await run(sql, on: connection)
        try await run("RELEASE SAVEPOINT coffer_index", on: connection)
      } catch  where PostgresFailure.sqlState(of: error) == "23505" {
        try await run("ROLLBACK TO SAVEPOINT coffer_index", on: connection)
        throw try await uniqueClash(in: table, failed: entry.index, on: connection)
      }
    }
  }

  /// The error for new unique indexes that stored rows break, naming the same row every
  /// backend names (see ``Coffer/UniqueClash``).
  private func uniqueClash(in table: PostgresTable, failed: Index, on connection: PostgresConnection)
    async throws
    -> CofferError
  {
    var rows: [Row] = []
    let fields = PostgresFields(kinds: table.kinds)
    for row in try await run("SELECT \(table.selectList) FROM \(table.table)", on: connection) {
      try fields.load(row)
      rows.append(Row(try fields.values()))
    }
    if let clash = UniqueClash.smallest(in: rows, schema: table.schema) {
      return clash.error(entity: table.schema.name, store: name)
    }
    return CofferError(
      .uniqueViolation,
      "\(table.schema.name) rows already stored share values of \(failed.fields.joined(separator: ", ")), so they "
        + "cannot be made unique. Remove or change the duplicates first. Nothing was changed.",
      store: name, entity: table.schema.name, field: failed.fields.joined(separator: ","))
  }
}

/// SQL literals for column defaults, where DDL cannot take bound parameters.
enum PostgresLiteral {
  static func sql(_ value: Value, _ kind: FieldKind) -> String {
    switch value {
    case .null: return "NULL"
    case .int(let number): return "(\(number))::bigint"
    case .double(let number):
      if number.isNaN { return "'NaN'::double precision" }
      if number.isInfinite {
        return number < 0 ? "'-Infinity'::double precision" : "'Infinity'::double precision"
      }
      return "'\(number.sign == .minus && number == 0 ? "-0" : "\(number)")'::double precision"
    case .string(let text): return quoted(PostgresText.escaped(text))
    case .document(let data): return quoted(PostgresText.escaped(String(decoding: data, as: UTF8.self)))
    case .bytes(let data): return "'\\x" + data.map { byte in hex(byte) }.joined() + "'::bytea"
    case .bool(let flag): return flag ? "TRUE" : "FALSE"
    case .uuid(let uuid): return "'\(uuid.uuidString)'::uuid"
    case .date(let date):
      let micros = Value.microseconds(since1970: date)
      return "(TIMESTAMPTZ 'epoch' + (\(micros))::bigint * INTERVAL '1 microsecond')"
    }
  }

  private static func quoted(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
  }

  private static func hex(_ byte: UInt8) -> String {
    let digits = Array("0123456789abcdef")
    return String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
  }
}
