import FluentKit
import FluentPostgresDriver
import FluentSQL
import Foundation
import Logging
import NIOCore
import NIOPosix

/// FluentKit over fluent-postgres-driver, used as a Swift server developer uses it: a `Model`,
/// the schema builder (and SQLKit for the index Fluent's schema builder cannot make), `find`, the
/// query builder for pages, scans and updates, and `create` on a collection of models in one
/// transaction. Its table matches the others': typed columns, a primary key on id, an index on
/// thread and date. Fluent opens connections as it needs them, up to four per event loop (the
/// concurrent gets ask for a database on a different loop per task, as requests do in Vapor).
final class FluentSystem: BenchSystem {
  let name = "Fluent"
  let isDurable = true
  private var database: PostgresDatabase?
  private var databases: Databases?
  private var logger = Logger(label: "coffer-bench.fluent")

  /// Messages per `create`: one `INSERT` binds six parameters per row, and PostgreSQL takes at
  /// most 65,535 parameters in a statement.
  private static let insertChunk = 5_000

  /// The Fluent model of a chat message, as its documentation declares models.
  ///
  /// `@unchecked Sendable` as Fluent's documentation has every model (its property wrappers keep
  /// their values in reference types); no lock: each instance is used by one task at a time.
  final class Message: Model, @unchecked Sendable {
    static let schema = "ChatMessage"

    @ID(custom: "id", generatedBy: .user) var id: Int64?
    @Field(key: "threadID") var threadID: Int64
    @Field(key: "sender") var sender: String
    @Field(key: "text") var text: String
    @Field(key: "date") var date: Date
    @Field(key: "isRead") var isRead: Bool

    init() {}

    init(_ message: ChatMessage) {
      id = message.id
      threadID = message.threadID
      sender = message.sender
      text = message.text
      date = message.date
      isRead = message.isRead
    }

    /// The workload's value, as every system hands back.
    var message: ChatMessage {
      get throws {
        ChatMessage(
          id: try requireID(), threadID: threadID, sender: sender, text: text, date: date, isRead: isRead)
      }
    }
  }

  init() { logger.logLevel = .warning }

  /// A database on one event loop, as a request handler gets it.
  private func handle(on eventLoop: (any EventLoop)? = nil) throws -> any Database {
    guard let databases else { throw BenchError("\(name): no database is open") }
    let loop = eventLoop ?? databases.eventLoopGroup.any()
    guard let database = databases.database(.psql, logger: logger, on: loop) else {
      throw BenchError("\(name): the databases are shut down")
    }
    return database
  }

  func create(in folder: String) async throws {
    try await close()
    let database = try PostgresDatabase("coffer_bench_fluent")
    try database.recreate()
    self.database = database
    let databases = Databases(threadPool: .singleton, on: MultiThreadedEventLoopGroup.singleton)
    databases.use(
      try .postgres(url: database.url, maxConnectionsPerEventLoop: 4, sqlLogLevel: .trace), as: .psql)
    self.databases = databases
    let db = try handle()
    try await db.schema(Message.schema)
      .field("id", .int64, .identifier(auto: false))
      .field("threadID", .int64, .required)
      .field("sender", .string, .required)
      .field("text", .string, .required)
      .field("date", .datetime, .required)
      .field("isRead", .bool, .required)
      .create()
    guard let sql = db as? any SQLDatabase else { throw BenchError("\(name): not an SQL database") }
    try await sql.create(index: "ChatMessage_threadID_date").on(Message.schema).column("threadID")
      .column("date").run()
  }

  func bulkInsert(_ messages: [ChatMessage]) async throws {
    try await handle().transaction { db in
      for start in stride(from: 0, to: messages.count, by: Self.insertChunk) {
        let chunk = messages[start..<min(start + Self.insertChunk, messages.count)]
        try await chunk.map(Message.init).create(on: db)
      }
    }
  }

  func get(_ id: Int64) async throws -> ChatMessage? {
    try await Message.find(id, on: handle())?.message
  }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] {
    try await Message.query(on: handle()).filter(\.$threadID == thread).sort(\.$date, .descending)
      .sort(\.$id).limit(50).all().map { try $0.message }
  }

  func scan() async throws -> [ChatMessage] {
    try await Message.query(on: handle()).sort(\.$id).all().map { try $0.message }
  }

  func update(_ messages: [ChatMessage]) async throws {
    try await handle().transaction { db in
      for message in messages { try await Self.replace(message, on: db) }
    }
  }

  func commit(_ message: ChatMessage) async throws { try await Self.replace(message, on: handle()) }

  /// Replaces a message's fields with the query builder, without reading it first.
  private static func replace(_ message: ChatMessage, on db: any Database) async throws {
    try await Message.query(on: db).filter(\.$id == message.id)
      .set(\.$threadID, to: message.threadID).set(\.$sender, to: message.sender)
      .set(\.$text, to: message.text).set(\.$date, to: message.date).set(\.$isRead, to: message.isRead)
      .update()
  }

  /// One task per getter, each with a database on the next event loop, as Vapor hands one to
  /// each request.
  func concurrentGets(_ ids: [Int64], tasks: Int, until deadline: ContinuousClock.Instant) async throws
    -> [GetTally]?
  {
    guard let group = databases?.eventLoopGroup else { throw BenchError("\(name): no database is open") }
    let handles = try (0..<tasks).map { _ in try handle(on: group.next()) }
    return try await inTasks(tasks) { task in
      var tally = GetTally()
      for position in stride(from: task, to: ids.count, by: tasks) {
        if tally.done % 100 == 0 && ContinuousClock.now >= deadline { break }
        tally.threadSum &+= try await Message.find(ids[position], on: handles[task])?.threadID ?? -1
        tally.done += 1
      }
      return tally
    }
  }

  func fileSize() -> Int64 { database?.size() ?? 0 }

  func close() async throws {
    await databases?.shutdownAsync()
    databases = nil
  }
}
