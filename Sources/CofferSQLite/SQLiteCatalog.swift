@_spi(Backend) import Coffer
import Foundation

/// The metadata table that keeps, for each entity, its Coffer schema (exact field kinds) and the
/// table and columns that hold it, so that a later `prepare` can compare and evolve.
///
/// Table and column names are the entity and field names themselves whenever SQLite (which
/// ignores ASCII case in identifiers) can tell them apart; an entity `Order` stored beside
/// `order` gets the table `Order_2`, and this table records that.
enum SQLiteCatalog {
  static let tableName = "coffer_schema"
  /// The layout this code writes; a file with a larger `PRAGMA user_version` is newer.
  static let formatVersion = 1

  static let createSQL = """
    CREATE TABLE IF NOT EXISTS "coffer_schema" (
      "entity" TEXT PRIMARY KEY NOT NULL,
      "table" TEXT NOT NULL,
      "columns" TEXT NOT NULL,
      "schema" TEXT NOT NULL
    ) STRICT
    """
  static let readSQL = #"SELECT "table", "columns", "schema" FROM "coffer_schema" WHERE "entity" = ?1"#
  static let writeSQL =
    #"INSERT OR REPLACE INTO "coffer_schema" ("entity", "table", "columns", "schema") VALUES (?1, ?2, ?3, ?4)"#

  /// Creates the catalog table when it is missing and stamps a new file with the layout version.
  static func create(on connection: SQLiteConnection) throws {
    try connection.execute(createSQL)
    if try connection.text("PRAGMA user_version") == "0" {
      try connection.execute("PRAGMA user_version = \(formatVersion)")
    }
  }

  /// An entity as recorded: its stored schema, table and the column of each stored field.
  struct Record {
    var schema: EntitySchema
    var tableName: String
    var columns: [String]
  }

  /// The record of an entity, or `nil` when it was never stored.
  static func read(_ entity: String, on connection: SQLiteConnection) throws -> Record? {
    let statement = try connection.statement(readSQL)
    return try statement.withBindings([.string(entity)]) { () throws -> Record? in
      guard try statement.stepReading() else { return nil }
      let text = SQLiteCatalogCache.Text(columns: statement.data(at: 1), schema: statement.data(at: 2))
      if let known = connection.catalogCache[text] {
        return Record(schema: known.schema, tableName: statement.string(at: 0), columns: known.columns)
      }
      let record = try decode(
        entity, tableName: statement.string(at: 0), columns: text.columns, schema: text.schema,
        store: connection.storeName, path: connection.path)
      connection.catalogCache.remember(record.columns, record.schema, as: text)
      return record
    }
  }

  /// An entity's record from its stored row: the columns and schema as the JSON text
  /// ``write(_:on:)`` stores, checked to name one column per field.
  static func decode(
    _ entity: String, tableName: String, columns: Data, schema: Data, store: String, path: String
  ) throws -> Record {
    do {
      let columns = try JSONDecoder().decode([String].self, from: columns)
      let schema = try JSONDecoder().decode(EntitySchema.self, from: schema)
      guard columns.count == schema.fields.count else { throw ColumnCountMismatch() }
      return Record(schema: schema, tableName: tableName, columns: columns)
    } catch {
      throw CofferError(
        .corruptStore,
        "The stored description of entity '\(entity)' in the coffer_schema table cannot be read; "
          + "something other than Coffer changed it. Restore the file from a backup.",
        store: store, entity: entity, path: path)
    }
  }

  /// The stored schema of every recorded entity, sorted by name; none before the first prepare.
  static func schemas(on connection: SQLiteConnection) throws -> [EntitySchema] {
    let exists = try connection.text(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1", [.string(tableName)])
    guard exists == "1" else { return [] }
    return try recordedSchemas(on: connection)
  }

  /// The schemas of every entity, from the catalog table, which must exist.
  static func recordedSchemas(on connection: SQLiteConnection) throws -> [EntitySchema] {
    let statement = try connection.statement(#"SELECT "entity" FROM "coffer_schema""#)
    var entities: [String] = []
    try statement.withBindings([]) {
      while try statement.stepReading() { entities.append(statement.string(at: 0)) }
    }
    return try entities.sorted().compactMap { try read($0, on: connection)?.schema }
  }

  /// Records an entity.
  static func write(_ record: Record, on connection: SQLiteConnection) throws {
    let (columns, schema) = try encode(record)
    try connection.run(
      writeSQL, [.string(record.schema.name), .string(record.tableName), .string(columns), .string(schema)])
    connection.catalogCache.remember(
      record.columns, record.schema, as: .init(columns: Data(columns.utf8), schema: Data(schema.utf8)))
  }

  /// The JSON texts a record's columns and schema are stored as, keys sorted.
  static func encode(_ record: Record) throws -> (columns: String, schema: String) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    let columns = try encoder.encode(record.columns)
    let schema = try encoder.encode(record.schema)
    return (String(decoding: columns, as: UTF8.self), String(decoding: schema, as: UTF8.self))
  }

  /// Forgets an entity's record.
  static func delete(_ entity: String, on connection: SQLiteConnection) throws {
    try connection.run(#"DELETE FROM "coffer_schema" WHERE "entity" = ?1"#, [.string(entity)])
  }

  /// Every table and index name in the database, and the names Coffer keeps for its own
  /// tables, folded as SQLite compares them.
  static func takenNames(on connection: SQLiteConnection) throws -> Set<String> {
    let statement = try connection.statement("SELECT name FROM sqlite_schema")
    var names: Set<String> = [
      SQLiteIdentifier.folded(tableName), SQLiteIdentifier.folded(SQLiteMigrationLog.tableName),
      SQLiteIdentifier.folded(SQLiteChangeFeed.changesTable),
      SQLiteIdentifier.folded(SQLiteChangeFeed.boundsTable),
    ]
    try statement.withBindings([]) {
      while try statement.stepReading() { names.insert(SQLiteIdentifier.folded(statement.string(at: 0))) }
    }
    return names
  }

  /// The columns a table has, folded, including those of fields no longer declared.
  static func columnNames(of table: String, on connection: SQLiteConnection) throws -> Set<String> {
    let statement = try connection.statement("SELECT name FROM pragma_table_info(?1)")
    var names: Set<String> = []
    try statement.withBindings([.string(table)]) {
      while try statement.stepReading() { names.insert(SQLiteIdentifier.folded(statement.string(at: 0))) }
    }
    return names
  }
}

/// A stored column list that does not match its stored schema.
private struct ColumnCountMismatch: Error {}
