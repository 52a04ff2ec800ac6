import Foundation
import RawSQLite

/// A libsqlite3 connection as the raw C systems use it: opened in WAL mode with the run's
/// synchronous setting and a five-second busy timeout, each statement prepared once and then
/// reused.
final class RawSQLiteConnection {
  private(set) var handle: OpaquePointer?
  private var statements: [String: OpaquePointer] = [:]

  /// Opens (or creates) the database at `path`.
  init(path: String) throws {
    guard sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nil) == SQLITE_OK else {
      sqlite3_close_v2(handle)
      handle = nil
      throw BenchError("sqlite3_open_v2 \(path) failed")
    }
    // As long as Coffer's SQLite backend waits for a lock another connection holds.
    sqlite3_busy_timeout(handle, 5_000)
    try execute("PRAGMA journal_mode = WAL")
    try execute("PRAGMA synchronous = \(SQLiteSettings.synchronous)")
  }

  deinit { close() }

  /// Runs SQL that returns no rows.
  func execute(_ sql: String) throws {
    guard sqlite3_exec(handle, sql, nil, nil, nil) == SQLITE_OK else {
      throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(handle)))")
    }
  }

  /// The statement for `sql`, prepared on first use and then reused.
  func statement(_ sql: String) throws -> OpaquePointer {
    if let cached = statements[sql] { return cached }
    var prepared: OpaquePointer?
    guard
      sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil) == SQLITE_OK,
      let prepared
    else { throw BenchError("\(sql): \(String(cString: sqlite3_errmsg(handle)))") }
    statements[sql] = prepared
    return prepared
  }

  /// Steps once: `true` for a row, `false` when done.
  func step(_ statement: OpaquePointer) throws -> Bool {
    switch sqlite3_step(statement) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default: throw failure()
    }
  }

  /// The connection's last error.
  func failure() -> BenchError { BenchError(String(cString: sqlite3_errmsg(handle))) }

  /// Finalizes every statement prepared so far: before a schema change they would not survive.
  func forgetStatements() {
    for statement in statements.values { sqlite3_finalize(statement) }
    statements = [:]
  }

  /// Finalizes the statements and closes the connection.
  func close() {
    forgetStatements()
    if let handle { sqlite3_close_v2(handle) }
    handle = nil
  }
}
