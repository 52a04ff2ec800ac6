import Foundation
import GRDB

/// GRDB's Codable record API used the way its documentation shows: a `DatabasePool` (WAL), a
/// record type, `insert`/`update`/`fetchOne`/`fetchAll`, with the same table shape and the same
/// synchronous setting as the raw C system.
final class GRDBSystem: BenchSystem {
  let name = "GRDB records"
  let isDurable = true
  private var pool: GRDBPool?
  private var path = ""

  /// The GRDB record: the workload's fields, dates stored as seconds since 1970 in a REAL column.
  struct Record: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "ChatMessage"
    static let databaseDateEncodingStrategy = DatabaseDateEncodingStrategy.timeIntervalSince1970
    static let databaseDateDecodingStrategy = DatabaseDateDecodingStrategy.timeIntervalSince1970
    var id: Int64
    var threadID: Int64
    var sender: String
    var text: String
    var date: Date
    var isRead: Bool

    init(_ message: ChatMessage) {
      (id, threadID, sender, text, date, isRead) = (
        message.id, message.threadID, message.sender, message.text, message.date, message.isRead
      )
    }

    var message: ChatMessage {
      ChatMessage(id: id, threadID: threadID, sender: sender, text: text, date: date, isRead: isRead)
    }
  }

  private var open: GRDBPool {
    get throws {
      guard let pool else { throw BenchError("GRDB: no database is open") }
      return pool
    }
  }

  func create(in folder: String) async throws {
    try await close()
    path = folder + "/grdb.sqlite"
    pool = try GRDBPool(path: path)
    try write { db in
      try db.create(table: Record.databaseTableName) { table in
        table.primaryKey("id", .integer)
        table.column("threadID", .integer).notNull()
        table.column("sender", .text).notNull()
        table.column("text", .text).notNull()
        table.column("date", .double).notNull()
        table.column("isRead", .boolean).notNull()
      }
      try db.create(
        index: "ChatMessage_threadID_date", on: Record.databaseTableName, columns: ["threadID", "date"])
    }
  }

  func bulkInsert(_ messages: [ChatMessage]) async throws {
    try write { db in for message in messages { try Record(message).insert(db) } }
  }

  func get(_ id: Int64) async throws -> ChatMessage? {
    try read { db in try Record.fetchOne(db, key: id)?.message }
  }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] {
    try read { db in
      try Record.filter(Column("threadID") == thread).order(Column("date").desc, Column("id")).limit(50)
        .fetchAll(db).map(\.message)
    }
  }

  func scan() async throws -> [ChatMessage] {
    try read { db in try Record.order(Column("id")).fetchAll(db).map(\.message) }
  }

  func update(_ messages: [ChatMessage]) async throws {
    try write { db in for message in messages { try Record(message).update(db) } }
  }

  func commit(_ message: ChatMessage) async throws {
    try write { db in try Record(message).update(db) }
  }

  private func read<T>(_ body: (Database) throws -> T) throws -> T { try open.read(body) }

  private func write<T>(_ body: (Database) throws -> T) throws -> T { try open.write(body) }

  func fileSize() -> Int64 { sqliteSize(path) }

  func close() async throws {
    try pool?.close()
    pool = nil
  }
}
