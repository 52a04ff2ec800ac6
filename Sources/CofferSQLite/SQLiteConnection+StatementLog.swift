import CSQLite
@_spi(Backend) import Coffer

/// A connection's statement log, handed to SQLite's trace hook.
final class SQLiteStatementLog: Sendable {
  let log: StatementLog
  init(_ log: StatementLog) { self.log = log }
}

extension SQLiteConnection {
  /// Logs every statement this connection runs, with how long SQLite spent on it, from SQLite's
  /// own profiling hook (`sqlite3_trace_v2`, `SQLITE_TRACE_PROFILE`): the statement's text as
  /// compiled, whose values are bound parameters, never expanded.
  func logStatements(to log: StatementLog) {
    let box = SQLiteStatementLog(log)
    statementLog = box
    sqlite3_trace_v2(
      handle, UInt32(SQLITE_TRACE_PROFILE),
      { _, context, statement, elapsed in
        guard let context, let statement, let elapsed else { return 0 }
        let box = Unmanaged<SQLiteStatementLog>.fromOpaque(context).takeUnretainedValue()
        guard let text = sqlite3_sql(OpaquePointer(statement)) else { return 0 }
        box.log.record(String(cString: text), nanoseconds: elapsed.load(as: Int64.self))
        return 0
      }, Unmanaged.passUnretained(box).toOpaque())
  }
}
