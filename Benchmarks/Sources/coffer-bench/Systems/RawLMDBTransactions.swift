import RawLMDB

/// How the raw C liblmdb systems begin and end their transactions.
enum RawLMDBTransactions {
  /// Runs `body` in a new write transaction of `environment` and commits it (synced, with the
  /// environment's default flags); aborts it when `body` or the commit fails.
  static func writing<T>(in environment: OpaquePointer?, _ body: (OpaquePointer?) throws -> T) throws -> T {
    var transaction: OpaquePointer?
    try checkLMDB(mdb_txn_begin(environment, nil, 0, &transaction), "mdb_txn_begin")
    do {
      let result = try body(transaction)
      try checkLMDB(mdb_txn_commit(transaction), "mdb_txn_commit")
      return result
    } catch {
      mdb_txn_abort(transaction)
      throw error
    }
  }

  /// Runs `body` in a read transaction: `reader` begun the first time and renewed afterwards,
  /// then reset — the cheapest way LMDB offers to start one.
  static func reading<T>(
    in environment: OpaquePointer?, with reader: inout OpaquePointer?, _ body: (OpaquePointer?) throws -> T
  ) throws -> T {
    if let reader {
      try checkLMDB(mdb_txn_renew(reader), "mdb_txn_renew")
    } else {
      try checkLMDB(mdb_txn_begin(environment, nil, UInt32(MDB_RDONLY), &reader), "mdb_txn_begin")
    }
    defer { mdb_txn_reset(reader) }
    return try body(reader)
  }

  /// Calls `body` with each key and value of `database` in key order, in `transaction`.
  static func walk(
    _ database: MDB_dbi, in transaction: OpaquePointer?, _ body: (MDB_val, MDB_val) throws -> Void
  ) throws {
    var cursor: OpaquePointer?
    try checkLMDB(mdb_cursor_open(transaction, database, &cursor), "mdb_cursor_open")
    defer { mdb_cursor_close(cursor) }
    var key = MDB_val()
    var data = MDB_val()
    var status = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
    while status == 0 {
      try body(key, data)
      status = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
    }
    if status != MDB_NOTFOUND { try checkLMDB(status, "mdb_cursor_get") }
  }
}

/// Throws a liblmdb status other than success as an error naming the call.
func checkLMDB(_ status: Int32, _ call: String) throws {
  guard status == 0 else { throw BenchError("\(call): \(String(cString: mdb_strerror(status)))") }
}
