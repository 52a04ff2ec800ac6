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
}

/// Throws a liblmdb status other than success as an error naming the call.
func checkLMDB(_ status: Int32, _ call: String) throws {
  guard status == 0 else { throw BenchError("\(call): \(String(cString: mdb_strerror(status)))") }
}
