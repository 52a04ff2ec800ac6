import Foundation
import GRDB

/// GRDB's `DatabasePool` (WAL) as the GRDB systems use it: with the synchronous setting every
/// SQLite system of the run shares, and GRDB's synchronous reads and writes.
final class GRDBPool {
  private let pool: DatabasePool

  /// Opens (or creates) the database at `path`.
  init(path: String) throws {
    pool = try DatabasePool(path: path)
    // A pool sets `synchronous = NORMAL` on its writer.
    try pool.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA synchronous = \(SQLiteSettings.synchronous)")
    }
  }

  /// GRDB's synchronous read, the fastest way it offers (its async variant adds a queue hop).
  func read<T>(_ body: (Database) throws -> T) throws -> T { try pool.read(body) }

  /// GRDB's synchronous write transaction.
  func write<T>(_ body: (Database) throws -> T) throws -> T { try pool.write(body) }

  func close() throws { try pool.close() }
}
