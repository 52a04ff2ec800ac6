import Foundation
import RawLMDB

/// liblmdb called directly: the physical limit for the LMDB backend. One environment, a
/// database of id → row bytes and a sorted-duplicates index of (thread, date) → id, both with
/// order-preserving big-endian keys; every commit synced; one read transaction per lookup
/// (a reset and renewed handle, the cheapest way LMDB offers to start one); reads decode into
/// `ChatMessage` values.
final class RawLMDBSystem: BenchSystem {
  let name = "raw C liblmdb"
  let isDurable = true
  private var environment: OpaquePointer?
  private var rows: MDB_dbi = 0
  private var byThread: MDB_dbi = 0
  private var reader: OpaquePointer?
  private var path = ""

  private var databases: Databases { Databases(rows: rows, byThread: byThread) }

  func create(in folder: String) async throws {
    try await close()
    path = folder + "/raw-lmdb"
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    try openEnvironment()
  }

  /// Opens the environment at `path` and its two databases, making them when they are new.
  private func openEnvironment() throws {
    try checkLMDB(mdb_env_create(&environment), "mdb_env_create")
    try checkLMDB(mdb_env_set_maxdbs(environment, 4), "mdb_env_set_maxdbs")
    try checkLMDB(mdb_env_set_mapsize(environment, 16 << 30), "mdb_env_set_mapsize")
    try checkLMDB(mdb_env_open(environment, path, UInt32(MDB_NOTLS), 0o644), "mdb_env_open")
    try writing { transaction in
      try checkLMDB(mdb_dbi_open(transaction, "ChatMessage", UInt32(MDB_CREATE), &rows), "mdb_dbi_open")
      try checkLMDB(
        mdb_dbi_open(transaction, "ChatMessage.threadID_date", UInt32(MDB_CREATE | MDB_DUPSORT), &byThread),
        "mdb_dbi_open")
    }
  }

  func bulkInsert(_ messages: [ChatMessage]) async throws {
    try writing { transaction in
      for message in messages { try databases.put(message, in: transaction, replacing: false) }
    }
  }

  func get(_ id: Int64) async throws -> ChatMessage? { try reading { try databases.get(id, in: $0) } }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] {
    try reading { try databases.page(thread, in: $0) }
  }

  func scan() async throws -> [ChatMessage] {
    try reading { transaction in
      var all: [ChatMessage] = []
      try RawLMDBTransactions.walk(rows, in: transaction) { key, data in
        all.append(Row.decode(id: Key.leadingInt64(key), data))
      }
      return all
    }
  }

  func update(_ messages: [ChatMessage]) async throws {
    try writing { transaction in
      for message in messages { try databases.put(message, in: transaction, replacing: true) }
    }
  }

  func commit(_ message: ChatMessage) async throws {
    try writing { transaction in try databases.put(message, in: transaction, replacing: true) }
  }

  func fileSize() -> Int64 { diskUsage(path) }

  func close() async throws {
    if let reader { mdb_txn_abort(reader) }
    reader = nil
    if let environment { mdb_env_close(environment) }
    environment = nil
  }

  /// The migration benchmark's baseline for a rename, which changes no byte of a row: every
  /// row rewritten in place (`mdb_cursor_put` with `MDB_CURRENT`), one transaction.
  func rewriteRows() throws {
    try writing { transaction in
      try rewritingEveryRow(in: transaction) { _, _, data, row in
        row.append(contentsOf: UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size))
      }
    }
  }

  /// The migration benchmark's kind change: each row rewritten with its thread as decimal text
  /// (a length and UTF-8 bytes in place of the Int64), and the (thread, date) index emptied and
  /// filled again with text keys — one transaction.
  func convertThreadToText() throws {
    try writing { transaction in
      try checkLMDB(mdb_drop(transaction, byThread, 0), "mdb_drop")
      var indexKey: [UInt8] = []
      var id: [UInt8] = []
      try rewritingEveryRow(in: transaction) { transaction, key, data, row in
        let raw = UnsafeRawBufferPointer(start: data.mv_data, count: data.mv_size)
        let thread = String(Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: Int64.self)))
        withUnsafeBytes(of: UInt32(thread.utf8.count).littleEndian) { row.append(contentsOf: $0) }
        row.append(contentsOf: thread.utf8)
        row.append(contentsOf: raw[8...])
        indexKey.removeAll(keepingCapacity: true)
        indexKey.append(contentsOf: thread.utf8)
        indexKey.append(0)
        indexKey.append(contentsOf: raw[8..<16].reversed())
        id.removeAll(keepingCapacity: true)
        id.append(contentsOf: UnsafeRawBufferPointer(start: key.mv_data, count: key.mv_size))
        try indexKey.withUnsafeMutableBytes { keyBytes in
          try id.withUnsafeMutableBytes { idBytes in
            var indexValue = MDB_val(mv_size: keyBytes.count, mv_data: keyBytes.baseAddress)
            var idValue = MDB_val(mv_size: idBytes.count, mv_data: idBytes.baseAddress)
            try checkLMDB(mdb_put(transaction, byThread, &indexValue, &idValue, 0), "mdb_put")
          }
        }
      }
    }
  }

  /// Walks every row with a cursor and puts back in its place the bytes `body` appends to the
  /// (emptied) buffer it is given for the row.
  private func rewritingEveryRow(
    in transaction: OpaquePointer?,
    _ body: (OpaquePointer?, MDB_val, MDB_val, inout [UInt8]) throws -> Void
  ) throws {
    var cursor: OpaquePointer?
    try checkLMDB(mdb_cursor_open(transaction, rows, &cursor), "mdb_cursor_open")
    defer { mdb_cursor_close(cursor) }
    var key = MDB_val()
    var data = MDB_val()
    var status = mdb_cursor_get(cursor, &key, &data, MDB_FIRST)
    var row: [UInt8] = []
    while status == 0 {
      row.removeAll(keepingCapacity: true)
      try body(transaction, key, data, &row)
      try row.withUnsafeMutableBytes { bytes in
        var value = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
        try checkLMDB(mdb_cursor_put(cursor, &key, &value, UInt32(MDB_CURRENT)), "mdb_cursor_put")
      }
      status = mdb_cursor_get(cursor, &key, &data, MDB_NEXT)
    }
    if status != MDB_NOTFOUND { try checkLMDB(status, "mdb_cursor_get") }
  }

  // MARK: - Plumbing

  private func writing<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
    try RawLMDBTransactions.writing(in: environment, body)
  }

  private func reading<T>(_ body: (OpaquePointer?) throws -> T) throws -> T {
    try RawLMDBTransactions.reading(in: environment, with: &reader, body)
  }
}

extension RawLMDBSystem: ReadWriteSystem {
  /// Each reader and the writer on a thread of its own, with transactions of its own, in the
  /// one environment (opened with `MDB_NOTLS`, so a read transaction is not tied to a thread).
  func readWhileWriting(_ plans: [ReadPlan], writes: [ChatMessage], until deadline: ContinuousClock.Instant)
    async throws -> ReadWriteTally
  {
    let shared = SharedEnvironment(pointer: environment)
    let databases = databases
    return try await onSideThreads(readers: plans.count) { side in
      switch side {
      case .writer:
        let commits = try commitLoop(writes, until: deadline) { message in
          try RawLMDBTransactions.writing(in: shared.pointer) { transaction in
            try databases.put(message, in: transaction, replacing: true)
          }
        }
        return (nil, commits)
      case .reader(let index):
        var reader: OpaquePointer?
        defer { if let reader { mdb_txn_abort(reader) } }
        let tally = try readLoop(
          plans[index], until: deadline,
          get: { id in
            try RawLMDBTransactions.reading(in: shared.pointer, with: &reader) {
              try databases.get(id, in: $0)
            }
          },
          page: { thread in
            try RawLMDBTransactions.reading(in: shared.pointer, with: &reader) {
              try databases.page(thread, in: $0)
            }
          })
        return (tally, [])
      }
    }
  }

  func reopen(readingThread thread: Int64) async throws -> [ChatMessage] {
    try await close()
    try openEnvironment()
    return try reading { try databases.page(thread, in: $0) }
  }
}

/// The environment's handle, handed to the benchmark's threads: liblmdb lets every thread use
/// one environment, and each thread here begins transactions of its own in it.
private struct SharedEnvironment: @unchecked Sendable {
  let pointer: OpaquePointer?
}

/// The two databases by handle, and the reads and writes the system's calls and its threads
/// share. Handles are plain numbers, valid in every transaction of the environment.
private struct Databases: Sendable {
  var rows: MDB_dbi
  var byThread: MDB_dbi

  /// One row by id, in `transaction`.
  func get(_ id: Int64, in transaction: OpaquePointer?) throws -> ChatMessage? {
    var key = Key(id)
    return try key.withValue { value in
      var key = value
      var data = MDB_val()
      let status = mdb_get(transaction, rows, &key, &data)
      if status == MDB_NOTFOUND { return nil }
      try checkLMDB(status, "mdb_get")
      return Row.decode(id: id, data)
    }
  }

  /// The newest 50 messages of a thread, in `transaction`: the index walked backwards from the
  /// thread's end, then each row got by id.
  func page(_ thread: Int64, in transaction: OpaquePointer?) throws -> [ChatMessage] {
    var cursor: OpaquePointer?
    try checkLMDB(mdb_cursor_open(transaction, byThread, &cursor), "mdb_cursor_open")
    defer { mdb_cursor_close(cursor) }
    var ids: [Int64] = []
    ids.reserveCapacity(50)
    var seek = Key(thread, Int64.max)
    try seek.withValue { seek in
      var key = seek
      var data = MDB_val()
      var status = mdb_cursor_get(cursor, &key, &data, MDB_SET_RANGE)
      status =
        status == MDB_NOTFOUND
        ? mdb_cursor_get(cursor, &key, &data, MDB_LAST) : mdb_cursor_get(cursor, &key, &data, MDB_PREV)
      while status == 0, ids.count < 50, Key.leadingInt64(key) == thread {
        ids.append(Key.leadingInt64(data))
        status = mdb_cursor_get(cursor, &key, &data, MDB_PREV)
      }
      if status != 0 && status != MDB_NOTFOUND { try checkLMDB(status, "mdb_cursor_get") }
    }
    return try ids.map { id in
      var key = Key(id)
      return try key.withValue { value in
        var key = value
        var data = MDB_val()
        try checkLMDB(mdb_get(transaction, rows, &key, &data), "mdb_get")
        return Row.decode(id: id, data)
      }
    }
  }

  /// Writes a row and its index entry; when replacing, first removes the old index entry if the
  /// thread or date changed.
  func put(_ message: ChatMessage, in transaction: OpaquePointer?, replacing: Bool) throws {
    var key = Key(message.id)
    var indexKey = Key(message.threadID, Row.microseconds(message.date))
    var bytes = Row.encode(message)
    try key.withValue { key in
      var idValue = key
      if replacing {
        var old = MDB_val()
        try checkLMDB(mdb_get(transaction, rows, &idValue, &old), "mdb_get")
        let previous = Row.decode(id: message.id, old)
        if previous.threadID != message.threadID || previous.date != message.date {
          var oldIndex = Key(previous.threadID, Row.microseconds(previous.date))
          try oldIndex.withValue { oldIndex in
            var indexValue = oldIndex
            try checkLMDB(mdb_del(transaction, byThread, &indexValue, &idValue), "mdb_del")
          }
        }
      }
      try bytes.withUnsafeMutableBytes { bytes in
        var data = MDB_val(mv_size: bytes.count, mv_data: bytes.baseAddress)
        try checkLMDB(mdb_put(transaction, rows, &idValue, &data, 0), "mdb_put")
      }
      try indexKey.withValue { indexKey in
        var indexValue = indexKey
        try checkLMDB(mdb_put(transaction, byThread, &indexValue, &idValue, 0), "mdb_put")
      }
    }
  }
}

/// Big-endian keys with the sign bit flipped, so byte order is numeric order.
private struct Key {
  var bytes: [UInt8]

  init(_ numbers: Int64...) {
    bytes = []
    bytes.reserveCapacity(numbers.count * 8)
    for number in numbers {
      let flipped = UInt64(bitPattern: number) ^ (1 << 63)
      for shift in stride(from: 56, through: 0, by: -8) {
        bytes.append(UInt8(truncatingIfNeeded: flipped >> UInt64(shift)))
      }
    }
  }

  mutating func withValue<T>(_ body: (MDB_val) throws -> T) rethrows -> T {
    try bytes.withUnsafeMutableBytes { try body(MDB_val(mv_size: $0.count, mv_data: $0.baseAddress)) }
  }

  /// The first eight bytes of a key, read back as a number.
  static func leadingInt64(_ value: MDB_val) -> Int64 {
    guard let base = value.mv_data, value.mv_size >= 8 else { return 0 }
    var flipped: UInt64 = 0
    for index in 0..<8 { flipped = flipped << 8 | UInt64(base.load(fromByteOffset: index, as: UInt8.self)) }
    return Int64(bitPattern: flipped ^ (1 << 63))
  }
}

/// The row bytes: thread and date (microseconds) as little-endian Int64, the read flag as one
/// byte, then sender and text as a little-endian UInt32 length and their UTF-8 bytes.
private enum Row {
  static func microseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1e6).rounded()) }

  static func encode(_ message: ChatMessage) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(25 + message.sender.utf8.count + message.text.utf8.count)
    func append(_ number: Int64) { withUnsafeBytes(of: number.littleEndian) { bytes.append(contentsOf: $0) } }
    func append(_ text: String) {
      withUnsafeBytes(of: UInt32(text.utf8.count).littleEndian) { bytes.append(contentsOf: $0) }
      bytes.append(contentsOf: text.utf8)
    }
    append(message.threadID)
    append(microseconds(message.date))
    bytes.append(message.isRead ? 1 : 0)
    append(message.sender)
    append(message.text)
    return bytes
  }

  static func decode(id: Int64, _ value: MDB_val) -> ChatMessage {
    let raw = UnsafeRawBufferPointer(start: value.mv_data, count: value.mv_size)
    var offset = 17
    func string() -> String {
      let count = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: offset, as: UInt32.self)))
      offset += 4
      defer { offset += count }
      return String(decoding: raw[offset..<offset + count], as: UTF8.self)
    }
    let thread = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 0, as: Int64.self))
    let micros = Int64(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: Int64.self))
    let isRead = raw[16] != 0
    let sender = string()
    return ChatMessage(
      id: id, threadID: thread, sender: sender, text: string(),
      date: Date(timeIntervalSince1970: Double(micros) / 1e6), isRead: isRead)
  }
}
