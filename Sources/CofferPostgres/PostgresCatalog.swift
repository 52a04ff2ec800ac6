@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

/// The catalog table `coffer_catalog` in the store's schema: for each entity its exact Coffer
/// schema and the table and columns that hold it, so that a later `prepare` can compare and
/// evolve; and `coffer_format`, one row with the layout version this code writes.
struct PostgresCatalog {
  /// The layout this code writes; a store with a larger version is newer and is not touched.
  static let formatVersion = 1
  static let tableName = "coffer_catalog"
  static let formatTableName = "coffer_format"

  /// The quoted schema.
  let namespace: String
  let schemaName: String
  let store: String

  init(schema: String, store: String) {
    self.schemaName = schema
    self.namespace = SQLIdentifier.quoted(schema)
    self.store = store
  }

  var catalogTable: String { "\(namespace).\(SQLIdentifier.quoted(Self.tableName))" }
  var formatTable: String { "\(namespace).\(SQLIdentifier.quoted(Self.formatTableName))" }

  /// An entity as recorded.
  struct Record {
    var schema: EntitySchema
    var tableName: String
    var columns: [String]
  }

  /// The statements that create the schema and the catalog when they are missing.
  var createStatements: [String] {
    [
      "CREATE SCHEMA IF NOT EXISTS \(namespace)",
      """
      CREATE TABLE IF NOT EXISTS \(catalogTable) (
        "entity" text COLLATE "C" PRIMARY KEY,
        "table" text NOT NULL,
        "columns" text NOT NULL,
        "schema" text NOT NULL
      )
      """,
      "CREATE TABLE IF NOT EXISTS \(formatTable) (\"version\" integer NOT NULL)",
    ]
  }

  /// Whether the catalog table exists (a store that was never prepared has none).
  func exists(on connection: PostgresConnection) async throws -> Bool {
    var binds = PostgresBindings()
    binds.append(.string(schemaName), as: .string)
    binds.append(.string(Self.tableName), as: .string)
    let rows = try await connection.send(
      PostgresQuery(
        unsafeSQL: "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2", binds: binds
      ),
      logger: .disabled
    ).collect()
    return !rows.isEmpty
  }

  /// The format version recorded, or `nil` when none is.
  func version(on connection: PostgresConnection) async throws -> Int? {
    let rows = try await connection.send(
      PostgresQuery(unsafeSQL: "SELECT max(\"version\") FROM \(formatTable)"), logger: .disabled
    ).collect()
    guard let cell = rows.first?.first(where: { _ in true }), let bytes = cell.bytes else { return nil }
    var buffer = bytes
    return buffer.readInteger(as: Int32.self).map(Int.init)
  }

  /// Every recorded entity, by name.
  ///
  /// - Throws: ``Coffer/CofferError/Code/corruptStore`` naming an entity whose record cannot be read.
  func records(on connection: PostgresConnection) async throws -> [String: Record] {
    let read = try await readableRecords(on: connection)
    if let entity = read.unreadable.first { throw unreadable(entity) }
    return read.records
  }

  /// Every recorded entity that can be read, by name, and the names of those that cannot.
  func readableRecords(on connection: PostgresConnection) async throws -> (
    records: [String: Record], unreadable: [String]
  ) {
    let rows = try await connection.send(
      PostgresQuery(unsafeSQL: "SELECT \"entity\", \"table\", \"columns\", \"schema\" FROM \(catalogTable)"),
      logger: .disabled
    ).collect()
    var records: [String: Record] = [:]
    var unreadable: [String] = []
    for row in rows {
      let cells = Array(row)
      guard cells.count == 4 else { continue }
      let entity = try PostgresValues.read(cells[0].bytes, as: .string).string ?? ""
      do {
        guard case .string(let table) = try PostgresValues.read(cells[1].bytes, as: .string),
          case .string(let columnsText) = try PostgresValues.read(cells[2].bytes, as: .string),
          case .string(let schemaText) = try PostgresValues.read(cells[3].bytes, as: .string)
        else { throw CatalogDamage() }
        let columns = try JSONDecoder().decode([String].self, from: Data(columnsText.utf8))
        let schema = try JSONDecoder().decode(EntitySchema.self, from: Data(schemaText.utf8))
        guard columns.count == schema.fields.count, schema.name == entity else { throw CatalogDamage() }
        records[entity] = Record(schema: schema, tableName: table, columns: columns)
      } catch {
        unreadable.append(entity)
      }
    }
    return (records, unreadable.sorted())
  }

  /// The error for an entity whose record cannot be read.
  func unreadable(_ entity: String) -> CofferError {
    CofferError(
      .corruptStore,
      "The stored description of entity '\(entity)' in the coffer_catalog table cannot be read; something "
        + "other than Coffer changed it. Restore the schema from a backup.",
      store: store, entity: entity)
  }

  /// Records an entity (replacing its earlier record).
  func write(_ record: Record, on connection: PostgresConnection) async throws {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    var binds = PostgresBindings()
    binds.append(.string(record.schema.name), as: .string)
    binds.append(.string(record.tableName), as: .string)
    binds.append(.string(String(decoding: try encoder.encode(record.columns), as: UTF8.self)), as: .string)
    binds.append(.string(String(decoding: try encoder.encode(record.schema), as: UTF8.self)), as: .string)
    try await connection.send(
      PostgresQuery(
        unsafeSQL:
          "INSERT INTO \(catalogTable) (\"entity\", \"table\", \"columns\", \"schema\") VALUES ($1, $2, $3, $4) "
          + "ON CONFLICT (\"entity\") DO UPDATE SET \"table\" = EXCLUDED.\"table\", \"columns\" = EXCLUDED.\"columns\", "
          + "\"schema\" = EXCLUDED.\"schema\"",
        binds: binds),
      logger: .disabled)
  }

  /// Every table and index name in the schema, and the names Coffer keeps for its own tables:
  /// what a new table's name must avoid.
  func takenNames(on connection: PostgresConnection) async throws -> Set<String> {
    var taken = try await tableNames(on: connection)
    taken.formUnion(try await indexNames(on: connection))
    taken.formUnion([
      Self.tableName, Self.formatTableName, PostgresMigrationLog.tableName,
      PostgresChangeFeed.changesTableName,
      PostgresChangeFeed.boundsTableName,
    ])
    return taken
  }

  /// Forgets an entity's record.
  func delete(_ entity: String, on connection: PostgresConnection) async throws {
    var binds = PostgresBindings()
    binds.append(.string(entity), as: .string)
    _ = try await connection.send(
      PostgresQuery(unsafeSQL: "DELETE FROM \(catalogTable) WHERE \"entity\" = $1", binds: binds),
      logger: .disabled
    ).collect()
  }

  /// Every table name in the schema.
  func tableNames(on connection: PostgresConnection) async throws -> Set<String> {
    try await strings(
      "SELECT tablename FROM pg_catalog.pg_tables WHERE schemaname = $1", [schemaName], on: connection)
  }

  /// Every index name in the schema (index names share the namespace with tables).
  func indexNames(on connection: PostgresConnection) async throws -> Set<String> {
    try await strings(
      "SELECT indexname FROM pg_catalog.pg_indexes WHERE schemaname = $1", [schemaName], on: connection)
  }

  /// The indexes of one table, by name.
  func indexNames(of table: String, on connection: PostgresConnection) async throws -> Set<String> {
    try await strings(
      "SELECT indexname FROM pg_catalog.pg_indexes WHERE schemaname = $1 AND tablename = $2",
      [schemaName, table], on: connection)
  }

  /// The columns of a table and their types as PostgreSQL reports them (`format_type`).
  func columnTypes(of table: String, on connection: PostgresConnection) async throws -> [String: String] {
    var binds = PostgresBindings()
    binds.append(.string(schemaName), as: .string)
    binds.append(.string(table), as: .string)
    let rows = try await connection.send(
      PostgresQuery(
        unsafeSQL: """
          SELECT a.attname::text, format_type(a.atttypid, a.atttypmod)
          FROM pg_catalog.pg_attribute a
          JOIN pg_catalog.pg_class c ON c.oid = a.attrelid
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relname = $2 AND a.attnum > 0 AND NOT a.attisdropped
          """,
        binds: binds),
      logger: .disabled
    ).collect()
    var types: [String: String] = [:]
    for row in rows {
      let cells = Array(row)
      guard cells.count == 2, case .string(let name) = try PostgresValues.read(cells[0].bytes, as: .string),
        case .string(let type) = try PostgresValues.read(cells[1].bytes, as: .string)
      else { continue }
      types[name] = type
    }
    return types
  }

  private func strings(_ sql: String, _ parameters: [String], on connection: PostgresConnection) async throws
    -> Set<String>
  {
    var binds = PostgresBindings()
    for parameter in parameters { binds.append(.string(parameter), as: .string) }
    let rows = try await connection.send(PostgresQuery(unsafeSQL: sql, binds: binds), logger: .disabled)
      .collect()
    var names: Set<String> = []
    for row in rows {
      if let cell = row.first(where: { _ in true }),
        case .string(let name) = try PostgresValues.read(cell.bytes, as: .string)
      {
        names.insert(name)
      }
    }
    return names
  }
}

/// A catalog row that does not describe its entity.
private struct CatalogDamage: Error {}

extension Value {
  /// The string this value holds, if it is one.
  fileprivate var string: String? {
    if case .string(let text) = self { return text }
    return nil
  }
}
