import CLMDB
@_spi(Backend) import Coffer
import Foundation

extension Catalog {
  /// The prefix of the catalog's keys that record migration steps: `migration:` and the
  /// entry's position in the record, zero-padded to 8 digits, so keys sort in the order the
  /// steps ran.
  static let migrationPrefix = Array("migration:".utf8)

  /// The key of the record's entry at `position`.
  static func migrationKey(_ position: Int) -> [UInt8] {
    let digits = String(position)
    return migrationPrefix + Array((String(repeating: "0", count: max(0, 8 - digits.count)) + digits).utf8)
  }

  /// The store's record of migration steps, in the order they ran; empty when no plan migrated it.
  static func migrations(in transaction: Transaction, catalog: MDB_dbi) throws -> [MigrationRecord] {
    var encoded: [Data] = []
    try transaction.withCursor(catalog) { cursor in
      var found = try cursor.seek(migrationPrefix)
      while found, cursor.key.starts(with: migrationPrefix) {
        encoded.append(Data(cursor.data))
        found = try cursor.move(MDB_NEXT)
      }
    }
    return try encoded.map { try MigrationRecord(encoded: $0, store: transaction.context.name) }
  }

  /// Appends a step to the store's record of migrations.
  static func record(_ migration: MigrationRecord, in transaction: Transaction, catalog: MDB_dbi) throws {
    var count = 0
    try transaction.withCursor(catalog) { cursor in
      var found = try cursor.seek(migrationPrefix)
      while found, cursor.key.starts(with: migrationPrefix) {
        count += 1
        found = try cursor.move(MDB_NEXT)
      }
    }
    try transaction.put(catalog, migrationKey(count), Array(try migration.encoded()))
  }
}
