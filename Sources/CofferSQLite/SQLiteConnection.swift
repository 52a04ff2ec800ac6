import CSQLite
@_spi(Backend) import Coffer
import CofferSQL

/// One libsqlite3 connection and the prepared statements it compiled, cached by SQL text.
///
/// `@unchecked Sendable`: a connection is used by one caller at a time. The writer is reached
/// only inside `SQLiteBackend.writer`'s lock; a reader only between its checkout from and its
/// return to `SQLiteReaderPool.idle`'s lock. Nothing else touches the handle or the cache.
final class SQLiteConnection: @unchecked Sendable {
  let handle: OpaquePointer
  let path: String
  let storeName: String
  let busyTimeout: Int
  /// Compiled statements by SQL text. Swift compares strings by canonical equivalence, SQLite
  /// by bytes: two texts naming `"Ω"` (U+2126) and `"Ω"` (U+03A9) land in one bucket and are
  /// told apart by their UTF-8 bytes, so a statement is never reused for a column it does not name.
  private var statements: [String: [(sql: String, statement: SQLiteStatement)]] = [:]
  private var statementCount = 0
  private var tableStatements: [Int: SQLiteStatement] = [:]
  /// The serial of the table whose statements are cached, by table name: an evolved entity's
  /// table is published under a new serial, and the statements of the old one are dropped.
  private var tableSerials: [String: Int] = [:]
  /// Where this connection's statements are logged or traced, when the store logs or traces
  /// them: kept here, since SQLite's trace hook holds only an unretained pointer to it.
  var statementHook: SQLiteStatementHook?

  /// The most statements kept compiled; past it the cache starts again (rare: it takes that
  /// many different query shapes).
  static let statementLimit = 256

  /// The catalog records the backend's connections decoded or wrote (see
  /// ``SQLiteCatalogCache``).
  let catalogCache: SQLiteCatalogCache

  /// Opens a connection and applies the settings every connection shares.
  init(
    path: String, storeName: String, configuration: SQLiteBackend.Configuration,
    catalogCache: SQLiteCatalogCache
  ) throws {
    self.catalogCache = catalogCache
    var opened: OpaquePointer?
    let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE
    let code = sqlite3_open_v2(path, &opened, flags, nil)
    guard let opened else {
      throw SQLiteFailure.error(
        code: code, message: "out of memory", path: path, store: storeName, while: "opening")
    }
    self.handle = opened
    self.path = path
    self.storeName = storeName
    self.busyTimeout = configuration.busyTimeout
    guard code == SQLITE_OK else {
      let error = failure(code, while: "opening the database")
      sqlite3_close_v2(opened)
      throw error
    }
    sqlite3_busy_timeout(opened, Int32(clamping: configuration.busyTimeout))
    var registered = Self.registerFoldFunction(on: opened)
    if registered == SQLITE_OK { registered = Self.registerTextMatchFunction(on: opened) }
    if registered == SQLITE_OK { registered = Self.registerTextIndexFunctions(on: opened) }
    guard registered == SQLITE_OK else {
      let error = failure(registered, while: "registering Coffer's SQL functions")
      sqlite3_close_v2(opened)
      throw error
    }
  }

  deinit {
    for bucket in statements.values { for entry in bucket { entry.statement.finalize() } }
    for statement in tableStatements.values { statement.finalize() }
    sqlite3_close_v2(handle)
  }

  /// The statement for `sql`, compiled on first use and reused after (values are parameters).
  func statement(_ sql: String) throws -> SQLiteStatement {
    if let bucket = statements[sql] {
      for entry in bucket where entry.sql.utf8.elementsEqual(sql.utf8) { return entry.statement }
    }
    var compiled: OpaquePointer?
    let code = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
    guard code == SQLITE_OK, let compiled else { throw failure(code, while: "compiling a statement") }
    if statementCount >= Self.statementLimit {
      for bucket in statements.values { for entry in bucket { entry.statement.finalize() } }
      statements.removeAll(keepingCapacity: true)
      statementCount = 0
    }
    let statement = SQLiteStatement(compiled, connection: self)
    statements[sql, default: []].append((sql, statement))
    statementCount += 1
    return statement
  }

  /// The statement of one of a table's fixed operations, compiled once per connection.
  @inline(__always)
  func statement(for table: SQLiteTable, _ operation: SQLiteTable.Operation) throws -> SQLiteStatement {
    let key = table.serial &* 8 &+ operation.rawValue
    if let cached = tableStatements[key] { return cached }
    forgetStaleStatements(of: table)
    var compiled: OpaquePointer?
    let code = sqlite3_prepare_v3(
      handle, table.sql(operation), -1, UInt32(SQLITE_PREPARE_PERSISTENT), &compiled, nil)
    guard code == SQLITE_OK, let compiled else { throw failure(code, while: "compiling a statement") }
    let statement = SQLiteStatement(compiled, connection: self)
    tableStatements[key] = statement
    return statement
  }

  /// Finalizes the cached statements of an earlier version of `table` (another serial under the
  /// same table name), and all of them when there are as many as ``statementLimit``, so that
  /// schema evolutions and many entities leave no unbounded trail of compiled statements.
  private func forgetStaleStatements(of table: SQLiteTable) {
    if let serial = tableSerials.updateValue(table.serial, forKey: table.tableName), serial != table.serial {
      for operation in SQLiteTable.Operation.allCases {
        tableStatements.removeValue(forKey: serial &* 8 &+ operation.rawValue)?.finalize()
      }
    }
    if tableStatements.count >= Self.statementLimit {
      for statement in tableStatements.values { statement.finalize() }
      tableStatements.removeAll(keepingCapacity: true)
      tableSerials = [table.tableName: table.serial]
    }
  }

  /// How many statements of tables' fixed operations are compiled (for tests).
  var tableStatementCount: Int { tableStatements.count }

  /// Runs SQL that returns no rows, through the statement cache.
  func run(_ sql: String, _ parameters: [Value] = []) throws {
    try statement(sql).run(parameters)
  }

  /// Runs SQL text that may hold several statements and is not worth caching (DDL, pragmas).
  func execute(_ sql: String) throws {
    let code = sqlite3_exec(handle, sql, nil, nil, nil)
    guard code == SQLITE_OK else { throw failure(code, while: "changing the database schema") }
  }

  /// The first column of the first row of a query, as text, or `nil` when there is no row.
  func text(_ sql: String, _ parameters: [Value] = []) throws -> String? {
    let statement = try statement(sql)
    return try statement.withBindings(parameters) {
      try statement.step() ? statement.string(at: 0) : nil
    }
  }

  /// Rows changed by the last INSERT, UPDATE or DELETE.
  var changes: Int { Int(sqlite3_changes64(handle)) }

  /// Whether the database file can be written.
  var isReadOnly: Bool { sqlite3_db_readonly(handle, "main") == 1 }

  /// The error for a failed call, naming the path and what to do.
  func failure(_ code: Int32, while action: String) -> CofferError {
    let message = sqlite3_errmsg(handle).map { String(cString: $0) } ?? "unknown error"
    return SQLiteFailure.error(
      code: code, message: message, path: path, store: storeName, while: action, busyTimeout: busyTimeout)
  }
}
