import CLMDB
@_spi(Backend) import Coffer

/// One LMDB transaction, read-only or read-write, valid inside the closure that received it.
///
/// Byte buffers it returns point into the memory map and are valid only until the transaction
/// ends or, for a write transaction, until the next change.
struct Transaction {
  let pointer: OpaquePointer
  let context: StoreContext

  /// The value stored under `key`, or `nil`.
  func get(_ database: MDB_dbi, _ key: UnsafeRawBufferPointer) throws -> UnsafeRawBufferPointer? {
    var keyValue = MDB_val(mv_size: key.count, mv_data: UnsafeMutableRawPointer(mutating: key.baseAddress))
    var data = MDB_val()
    let code = mdb_get(pointer, database, &keyValue, &data)
    if code == MDB_NOTFOUND { return nil }
    try context.check(code, "read the store")
    return UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
  }

  /// The value stored under `key`, or `nil`.
  func get(_ database: MDB_dbi, _ key: [UInt8]) throws -> UnsafeRawBufferPointer? {
    try key.withUnsafeBytes { try get(database, $0) }
  }

  /// Stores `data` under `key`. Returns `false` when `flags` forbid overwriting and the key (or,
  /// in a sorted-duplicates database, the pair) is already there.
  @discardableResult
  func put(_ database: MDB_dbi, _ key: [UInt8], _ data: [UInt8], flags: Int32 = 0) throws -> Bool {
    let code = key.withUnsafeBytes { keyBytes in
      data.withUnsafeBytes { dataBytes in
        var keyValue = MDB_val(
          mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
        var dataValue = MDB_val(
          mv_size: dataBytes.count, mv_data: UnsafeMutableRawPointer(mutating: dataBytes.baseAddress))
        return mdb_put(pointer, database, &keyValue, &dataValue, UInt32(flags))
      }
    }
    if code == MDB_KEYEXIST { return false }
    if code == MDB_MAP_FULL { throw MapFullSignal() }
    try context.check(code, "write the store")
    return true
  }

  /// Deletes `key` (with `data`, in a sorted-duplicates database). Returns whether it was there.
  @discardableResult
  func delete(_ database: MDB_dbi, _ key: [UInt8], _ data: [UInt8]? = nil) throws -> Bool {
    let code = key.withUnsafeBytes { keyBytes in
      var keyValue = MDB_val(
        mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
      guard let data else { return mdb_del(pointer, database, &keyValue, nil) }
      return data.withUnsafeBytes { dataBytes in
        var dataValue = MDB_val(
          mv_size: dataBytes.count, mv_data: UnsafeMutableRawPointer(mutating: dataBytes.baseAddress))
        return mdb_del(pointer, database, &keyValue, &dataValue)
      }
    }
    if code == MDB_NOTFOUND { return false }
    if code == MDB_MAP_FULL { throw MapFullSignal() }
    try context.check(code, "write the store")
    return true
  }

  /// Opens a named database, creating it when `flags` include `MDB_CREATE`; `nil` when it does
  /// not exist and was not to be created.
  func open(_ name: String?, flags: Int32) throws -> MDB_dbi? {
    var database: MDB_dbi = 0
    let code = mdb_dbi_open(pointer, name, UInt32(flags), &database)
    if code == MDB_NOTFOUND { return nil }
    if code == MDB_MAP_FULL { throw MapFullSignal() }
    try context.check(code, "open the LMDB database '\(name ?? "main")'")
    return database
  }

  /// Removes every entry of a database and, when `delete` is set, the database itself.
  func drop(_ database: MDB_dbi, delete: Bool) throws {
    let code = mdb_drop(pointer, database, delete ? 1 : 0)
    if code == MDB_MAP_FULL { throw MapFullSignal() }
    try context.check(code, "empty an LMDB database")
  }

  /// The number of entries of a database.
  func entryCount(_ database: MDB_dbi) throws -> Int {
    var stat = MDB_stat()
    try context.check(mdb_stat(pointer, database, &stat), "read the store's statistics")
    return stat.ms_entries
  }

  /// Runs `body` with a cursor on a database, closing it afterwards.
  func withCursor<R>(_ database: MDB_dbi, _ body: (inout Cursor) throws -> R) throws -> R {
    var handle: OpaquePointer?
    try context.check(mdb_cursor_open(pointer, database, &handle), "open a cursor")
    guard let handle else { throw context.error(MDB_INVALID, "open a cursor") }
    defer { mdb_cursor_close(handle) }
    var cursor = Cursor(pointer: handle, context: context)
    return try body(&cursor)
  }
}

/// A position in one database of a ``Transaction``.
struct Cursor {
  let pointer: OpaquePointer
  let context: StoreContext
  /// The key and data at the position after the last successful move.
  private(set) var key = UnsafeRawBufferPointer(start: nil, count: 0)
  private(set) var data = UnsafeRawBufferPointer(start: nil, count: 0)

  /// Moves; returns `false` when there is no such entry.
  mutating func move(_ operation: MDB_cursor_op) throws -> Bool {
    var keyValue = MDB_val()
    var dataValue = MDB_val()
    return try finish(mdb_cursor_get(pointer, &keyValue, &dataValue, operation), keyValue, dataValue)
  }

  /// Moves to the first key at or after `target` (`MDB_SET_RANGE`) or to exactly `target`
  /// (`MDB_SET_KEY`); returns `false` when there is none.
  mutating func seek(_ target: [UInt8], _ operation: MDB_cursor_op = MDB_SET_RANGE) throws -> Bool {
    var dataValue = MDB_val()
    return try target.withUnsafeBytes { bytes in
      var keyValue = MDB_val(
        mv_size: bytes.count, mv_data: UnsafeMutableRawPointer(mutating: bytes.baseAddress))
      let code = mdb_cursor_get(pointer, &keyValue, &dataValue, operation)
      return try finish(code, keyValue, dataValue)
    }
  }

  /// The number of duplicates of the current key (1 outside sorted-duplicates databases).
  func duplicateCount() throws -> Int {
    var count = 0
    try context.check(mdb_cursor_count(pointer, &count), "read the store")
    return count
  }

  private mutating func finish(_ code: Int32, _ keyValue: MDB_val, _ dataValue: MDB_val) throws -> Bool {
    if code == MDB_NOTFOUND { return false }
    try context.check(code, "read the store")
    key = UnsafeRawBufferPointer(start: keyValue.mv_data, count: keyValue.mv_size)
    data = UnsafeRawBufferPointer(start: dataValue.mv_data, count: dataValue.mv_size)
    return true
  }
}
