@_spi(Backend) import Coffer
import Foundation

/// The table `coffer_migrations`: the store's record of the migration steps it has run, one
/// row per step (`position`, and the step's ``Coffer/MigrationRecord`` as JSON), made by the
/// first step recorded. A store no plan has migrated has none.
enum SQLiteMigrationLog {
  static let tableName = "coffer_migrations"

  static let createSQL = """
    CREATE TABLE IF NOT EXISTS "coffer_migrations" (
      "position" INTEGER PRIMARY KEY,
      "record" TEXT NOT NULL
    ) STRICT
    """

  /// Whether the log's table exists. A table of that name holding an entity (made before Coffer
  /// kept the name for itself) is not the log.
  static func exists(on connection: SQLiteConnection) throws -> Bool {
    let found = try connection.text(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND lower(name) = ?1", [.string(tableName)])
    guard found == "1" else { return false }
    return try owner(on: connection) == nil
  }

  /// The entity whose table has the log's name, if one has.
  static func owner(on connection: SQLiteConnection) throws -> String? {
    let catalog = try connection.text(
      "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
      [.string(SQLiteCatalog.tableName)])
    guard catalog == "1" else { return nil }
    return try connection.text(
      #"SELECT "entity" FROM "coffer_schema" WHERE lower("table") = ?1"#, [.string(tableName)])
  }

  /// The recorded steps, by position, from the log, which must exist (``exists(on:)``).
  static func records(on connection: SQLiteConnection) throws -> [MigrationRecord] {
    let statement = try connection.statement(#"SELECT "record" FROM "coffer_migrations" ORDER BY "position""#)
    var records: [MigrationRecord] = []
    try statement.withBindings([]) {
      while try statement.stepReading() {
        records.append(try MigrationRecord(encoded: statement.data(at: 0), store: connection.storeName))
      }
    }
    return records
  }

  /// Appends a step to the log, which must exist (``create(on:)``).
  ///
  /// - Throws: ``Coffer/CofferError/Code/conflict`` when a step is recorded at the position.
  static func append(_ record: MigrationRecord, on connection: SQLiteConnection) throws {
    let statement = try connection.statement(
      #"INSERT INTO "coffer_migrations" ("position", "record") VALUES (?1, ?2) ON CONFLICT DO NOTHING"#)
    try statement.run([
      .int(Int64(record.position)), .string(String(decoding: try record.encoded(), as: UTF8.self)),
    ])
    guard connection.changes == 1 else {
      throw CofferError(
        .conflict,
        "The store already records a migration step at position \(record.position), so step '\(record.name)' "
          + "cannot be recorded there; another process may have migrated it meanwhile. Open the store again.",
        store: connection.storeName)
    }
  }

  /// Makes the log's table when it is missing.
  static func create(on connection: SQLiteConnection) throws {
    try connection.execute(createSQL)
  }
}
