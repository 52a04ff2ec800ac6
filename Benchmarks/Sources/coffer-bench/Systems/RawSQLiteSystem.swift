import Foundation
import RawSQLite

/// libsqlite3 called directly with prepared statements compiled once: the physical limit for
/// the SQLite backend. Same table shape (a STRICT table of typed columns, dates as integer
/// microseconds, an index on thread and date), same journal mode and synchronous setting, and every read decodes into
/// `ChatMessage` values.
final class RawSQLiteSystem: BenchSystem {
  let name = "raw C libsqlite3"
  let isDurable = true
  private var connection: RawSQLiteConnection?
  private var path = ""

  private static let columns = "id, threadID, sender, text, date, isRead"

  func create(in folder: String) async throws {
    try await close()
    path = folder + "/raw.sqlite"
    connection = try RawSQLiteConnection(path: path)
    try execute(
      """
      CREATE TABLE "ChatMessage" (id INTEGER PRIMARY KEY, threadID INTEGER NOT NULL, sender TEXT NOT NULL,
        text TEXT NOT NULL, date INTEGER NOT NULL, isRead INTEGER NOT NULL) STRICT
      """)
    try execute(#"CREATE INDEX "ChatMessage_threadID_date" ON "ChatMessage" (threadID, date)"#)
  }

  func bulkInsert(_ messages: [ChatMessage]) async throws {
    try execute("BEGIN IMMEDIATE")
    let insert = try statement("INSERT INTO \"ChatMessage\" (\(Self.columns)) VALUES (?, ?, ?, ?, ?, ?)")
    for message in messages { try Self.write(message, with: insert, on: open(), idIndex: 1, firstField: 2) }
    try execute("COMMIT")
  }

  func get(_ id: Int64) async throws -> ChatMessage? { try Self.get(id, on: open()) }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] { try Self.page(thread, on: open()) }

  private static func get(_ id: Int64, on connection: RawSQLiteConnection) throws -> ChatMessage? {
    let select = try connection.statement("SELECT \(columns) FROM \"ChatMessage\" WHERE id = ?")
    defer { sqlite3_reset(select) }
    sqlite3_bind_int64(select, 1, id)
    return try connection.step(select) ? message(select) : nil
  }

  private static func page(_ thread: Int64, on connection: RawSQLiteConnection) throws -> [ChatMessage] {
    let select = try connection.statement(
      "SELECT \(columns) FROM \"ChatMessage\" WHERE threadID = ? ORDER BY date DESC, id LIMIT 50")
    defer { sqlite3_reset(select) }
    sqlite3_bind_int64(select, 1, thread)
    var page: [ChatMessage] = []
    page.reserveCapacity(50)
    while try connection.step(select) { page.append(message(select)) }
    return page
  }

  func scan() async throws -> [ChatMessage] {
    let select = try statement("SELECT \(Self.columns) FROM \"ChatMessage\" ORDER BY id")
    defer { sqlite3_reset(select) }
    var all: [ChatMessage] = []
    while try step(select) { all.append(Self.message(select)) }
    return all
  }

  func update(_ messages: [ChatMessage]) async throws {
    try execute("BEGIN IMMEDIATE")
    for message in messages { try replace(message) }
    try execute("COMMIT")
  }

  func commit(_ message: ChatMessage) async throws { try replace(message) }

  private func replace(_ message: ChatMessage) throws { try Self.replace(message, on: open()) }

  private static func replace(_ message: ChatMessage, on connection: RawSQLiteConnection) throws {
    let update = try connection.statement(
      "UPDATE \"ChatMessage\" SET threadID = ?, sender = ?, text = ?, date = ?, isRead = ? WHERE id = ?")
    try write(message, with: update, on: connection, idIndex: 6, firstField: 1)
  }

  func fileSize() -> Int64 { sqliteSize(path) }

  /// The query-model benchmark's threads: `BenchThread (id INTEGER PRIMARY KEY, title TEXT)`.
  func insertThreads(_ count: Int) throws {
    try execute(#"CREATE TABLE "BenchThread" (id INTEGER PRIMARY KEY, title TEXT NOT NULL) STRICT"#)
    try execute("BEGIN IMMEDIATE")
    let insert = try statement(#"INSERT INTO "BenchThread" (id, title) VALUES (?, ?)"#)
    for thread in 0..<count {
      defer { sqlite3_reset(insert) }
      sqlite3_bind_int64(insert, 1, Int64(thread))
      try "thread \(thread)".withCString { title in
        sqlite3_bind_text(insert, 2, title, -1, nil)
        _ = try step(insert)
      }
    }
    try execute("COMMIT")
  }

  /// `SELECT threadID, count(*) … WHERE isRead = 0 GROUP BY threadID`: unread messages per thread.
  func unreadPerThread() throws -> [(thread: Int64, count: Int)] {
    let select = try statement(
      #"SELECT threadID, count(*) FROM "ChatMessage" WHERE isRead = 0 GROUP BY threadID ORDER BY threadID"#)
    defer { sqlite3_reset(select) }
    var groups: [(thread: Int64, count: Int)] = []
    while try step(select) {
      groups.append((sqlite3_column_int64(select, 0), Int(sqlite3_column_int64(select, 1))))
    }
    return groups
  }

  /// `SELECT sum(threadID)`: the sum of a numeric field over every message.
  func sumOfThreadIDs() throws -> Int64 {
    let select = try statement(#"SELECT sum(threadID) FROM "ChatMessage""#)
    defer { sqlite3_reset(select) }
    guard try step(select) else { return 0 }
    return sqlite3_column_int64(select, 0)
  }

  /// A thread and its newest `limit` messages: two queries.
  func threadWithNewest(_ thread: Int64, limit: Int) throws -> (title: String, messages: [ChatMessage]) {
    let parent = try statement(#"SELECT title FROM "BenchThread" WHERE id = ?"#)
    var title = ""
    do {
      defer { sqlite3_reset(parent) }
      sqlite3_bind_int64(parent, 1, thread)
      if try step(parent) { title = String(cString: sqlite3_column_text(parent, 0)) }
    }
    let select = try statement(
      "SELECT \(Self.columns) FROM \"ChatMessage\" WHERE threadID = ? ORDER BY date DESC, id LIMIT ?")
    defer { sqlite3_reset(select) }
    sqlite3_bind_int64(select, 1, thread)
    sqlite3_bind_int64(select, 2, Int64(limit))
    var page: [ChatMessage] = []
    page.reserveCapacity(limit)
    while try step(select) { page.append(Self.message(select)) }
    return (title, page)
  }

  /// The migration benchmark's rename: `ALTER TABLE … RENAME COLUMN`, one transaction.
  func renameColumn(_ from: String, to: String) throws {
    try execute("BEGIN IMMEDIATE")
    try execute(#"ALTER TABLE "ChatMessage" RENAME COLUMN "# + "\(from) TO \(to)")
    try execute("COMMIT")
  }

  /// The migration benchmark's kind change, `threadID` from INTEGER to TEXT, the way SQLite's
  /// documentation changes a column's type: a new table filled by `INSERT … SELECT` with a
  /// `CAST`, the old table dropped, the new one renamed and its index made again — one
  /// transaction.
  func convertThreadToText() throws {
    try open().forgetStatements()
    try execute("BEGIN IMMEDIATE")
    try execute(
      """
      CREATE TABLE "ChatMessage_new" (id INTEGER PRIMARY KEY, threadID TEXT NOT NULL, sender TEXT NOT NULL,
        body TEXT NOT NULL, date INTEGER NOT NULL, isRead INTEGER NOT NULL) STRICT
      """)
    try execute(
      #"INSERT INTO "ChatMessage_new" SELECT id, CAST(threadID AS TEXT), sender, body, date, isRead FROM "ChatMessage""#
    )
    try execute(#"DROP TABLE "ChatMessage""#)
    try execute(#"ALTER TABLE "ChatMessage_new" RENAME TO "ChatMessage""#)
    try execute(#"CREATE INDEX "ChatMessage_threadID_date" ON "ChatMessage" (threadID, date)"#)
    try execute("COMMIT")
  }

  func close() async throws {
    connection?.close()
    connection = nil
  }

  // MARK: - Plumbing

  private func open() throws -> RawSQLiteConnection {
    guard let connection else { throw BenchError("\(name): no database is open") }
    return connection
  }

  private func execute(_ sql: String) throws { try open().execute(sql) }

  private func statement(_ sql: String) throws -> OpaquePointer { try open().statement(sql) }

  private func step(_ statement: OpaquePointer) throws -> Bool { try open().step(statement) }

  /// Binds a message's fields (the id at `idIndex`, the others from `firstField` on) and runs the statement.
  private static func write(
    _ message: ChatMessage, with statement: OpaquePointer, on connection: RawSQLiteConnection, idIndex: Int32,
    firstField: Int32
  ) throws {
    defer { sqlite3_reset(statement) }
    sqlite3_bind_int64(statement, idIndex, message.id)
    sqlite3_bind_int64(statement, firstField, message.threadID)
    sqlite3_bind_int64(statement, firstField + 3, Int64((message.date.timeIntervalSince1970 * 1e6).rounded()))
    sqlite3_bind_int(statement, firstField + 4, message.isRead ? 1 : 0)
    var sender = message.sender
    var text = message.text
    try sender.withUTF8 { sender in
      try text.withUTF8 { text in
        sqlite3_bind_text(statement, firstField + 1, sender.baseAddress, Int32(sender.count), nil)
        sqlite3_bind_text(statement, firstField + 2, text.baseAddress, Int32(text.count), nil)
        guard sqlite3_step(statement) == SQLITE_DONE else { throw connection.failure() }
      }
    }
  }

  private static func message(_ statement: OpaquePointer) -> ChatMessage {
    ChatMessage(
      id: sqlite3_column_int64(statement, 0), threadID: sqlite3_column_int64(statement, 1),
      sender: text(statement, 2), text: text(statement, 3),
      date: Date(timeIntervalSince1970: Double(sqlite3_column_int64(statement, 4)) / 1e6),
      isRead: sqlite3_column_int(statement, 5) != 0)
  }

  private static func text(_ statement: OpaquePointer, _ column: Int32) -> String {
    guard let bytes = sqlite3_column_text(statement, column) else { return "" }
    let count = Int(sqlite3_column_bytes(statement, column))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }
}

extension RawSQLiteSystem: ReadWriteSystem {
  /// Each reader and the writer on a thread with a connection of its own, as a C program would.
  func readWhileWriting(_ plans: [ReadPlan], writes: [ChatMessage], until deadline: ContinuousClock.Instant)
    async throws -> ReadWriteTally
  {
    let path = path
    return try await onSideThreads(readers: plans.count) { side in
      let connection = try RawSQLiteConnection(path: path)
      defer { connection.close() }
      switch side {
      case .writer:
        return (nil, try commitLoop(writes, until: deadline) { try Self.replace($0, on: connection) })
      case .reader(let index):
        let tally = try readLoop(
          plans[index], until: deadline, get: { try Self.get($0, on: connection) },
          page: { try Self.page($0, on: connection) })
        return (tally, [])
      }
    }
  }

  func reopen(readingThread thread: Int64) async throws -> [ChatMessage] {
    try await close()
    let connection = try RawSQLiteConnection(path: path)
    self.connection = connection
    return try Self.page(thread, on: connection)
  }
}

/// The settings every SQLite system in the run shares, so the comparison is like for like.
enum SQLiteSettings {
  /// `FULL`: a commit is on disk, not just in the OS cache, when it returns.
  static let synchronous = "FULL"
}
