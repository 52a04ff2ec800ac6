@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

/// The table `coffer_migrations` in the store's schema: the store's record of the migration
/// steps it has run, one row per step (`position`, and the step's ``Coffer/MigrationRecord``
/// as JSON), made by the first step recorded. A store no plan has migrated has none.
struct PostgresMigrationLog {
  static let tableName = "coffer_migrations"

  let catalog: PostgresCatalog

  /// The quoted, schema-qualified table.
  var table: String { "\(catalog.namespace).\(SQLIdentifier.quoted(Self.tableName))" }

  /// Whether the table exists.
  func exists(on connection: PostgresConnection) async throws -> Bool {
    var binds = PostgresBindings()
    binds.append(.string(catalog.schemaName), as: .string)
    binds.append(.string(Self.tableName), as: .string)
    return try await !connection.send(
      PostgresQuery(
        unsafeSQL: "SELECT 1 FROM pg_catalog.pg_tables WHERE schemaname = $1 AND tablename = $2", binds: binds
      )
    ).collect().isEmpty
  }

  /// The recorded steps, by position.
  func records(on connection: PostgresConnection) async throws -> [MigrationRecord] {
    guard try await exists(on: connection) else { return [] }
    let rows = try await connection.send(
      PostgresQuery(unsafeSQL: "SELECT \"record\" FROM \(table) ORDER BY \"position\"")
    ).collect()
    return try rows.map { row in
      guard let cell = row.first(where: { _ in true }),
        case .string(let text) = try PostgresValues.read(cell.bytes, as: .string)
      else {
        return try MigrationRecord(encoded: Data(), store: catalog.store)
      }
      return try MigrationRecord(encoded: Data(text.utf8), store: catalog.store)
    }
  }

  /// Appends a step, making the table first if it is missing.
  ///
  /// - Throws: ``Coffer/CofferError/Code/conflict`` when a step is recorded at the position.
  func append(_ record: MigrationRecord, on connection: PostgresConnection) async throws {
    _ = try await connection.send(
      PostgresQuery(
        unsafeSQL:
          "CREATE TABLE IF NOT EXISTS \(table) (\"position\" bigint PRIMARY KEY, \"record\" text NOT NULL)")
    ).collect()
    var binds = PostgresBindings()
    binds.append(.int(Int64(record.position)), as: .int)
    binds.append(.string(String(decoding: try record.encoded(), as: UTF8.self)), as: .string)
    let inserted = try await connection.send(
      PostgresQuery(
        unsafeSQL:
          "INSERT INTO \(table) (\"position\", \"record\") VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING 1",
        binds: binds)
    ).collect()
    guard !inserted.isEmpty else {
      throw CofferError(
        .conflict,
        "The store already records a migration step at position \(record.position), so step '\(record.name)' "
          + "cannot be recorded there; another process may have migrated it meanwhile. Open the store again.",
        store: catalog.store)
    }
  }
}
