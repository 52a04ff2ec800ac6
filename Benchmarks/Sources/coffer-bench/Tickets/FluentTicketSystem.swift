import FluentKit
import FluentSQL
import FluentSQLiteDriver
import Foundation
import Logging
import NIOCore
import NIOPosix

/// FluentKit over fluent-sqlite-driver for the ticket workload, used as a Swift server developer
/// uses it: a `Model`, the schema builder (with its unique constraint on `key`) and SQLKit for
/// the two indexes Fluent's schema builder cannot make, `find`, the query builder with `filter`,
/// `sort`, `range`, `count` and `sum`, `create` on an array of models and updates through the
/// query builder, each batch in one transaction. The database is a file in WAL mode with the
/// synchronous setting every SQLite system of the run has. Fluent stores UUIDs as text (whose
/// order is the bytes' order) and dates as seconds since 1970 in a `REAL`, which it reads back
/// rounded to the microsecond: the whole microseconds written, exactly. One event loop serves
/// every call, so one connection does all the work.
final class FluentTicketSystem: TicketSystem {
  let name = "Fluent SQLite"
  private var databases: Databases?
  private var loop: (any EventLoop)?
  private var logger = Logger(label: "coffer-bench.fluent-sqlite")
  private var path = ""

  /// Tickets per `create`: one `INSERT` binds eleven parameters per row.
  private static let insertChunk = 2_000

  /// The Fluent model of a ticket, as its documentation declares models.
  ///
  /// `@unchecked Sendable` as Fluent's documentation has every model (its property wrappers keep
  /// their values in reference types); no lock: each instance is used by one task at a time.
  final class Record: Model, @unchecked Sendable {
    static let schema = "Ticket"

    @ID(custom: "id", generatedBy: .user) var id: UUID?
    @Field(key: "key") var key: String
    @Field(key: "projectID") var projectID: UUID
    @Field(key: "status") var status: Int64
    @Field(key: "priority") var priority: Int64
    @OptionalField(key: "assignee") var assignee: UUID?
    @Field(key: "title") var title: String
    @OptionalField(key: "body") var body: String?
    @Field(key: "createdAt") var createdAt: Date
    @OptionalField(key: "closedAt") var closedAt: Date?
    @OptionalField(key: "estimate") var estimate: Double?

    init() {}

    init(_ ticket: Ticket) {
      id = ticket.id
      key = ticket.key
      projectID = ticket.projectID
      status = ticket.status
      priority = ticket.priority
      assignee = ticket.assignee
      title = ticket.title
      body = ticket.body
      createdAt = ticket.createdAt
      closedAt = ticket.closedAt
      estimate = ticket.estimate
    }

    /// The workload's value, as every system hands back.
    var ticket: Ticket {
      get throws {
        Ticket(
          id: try requireID(), key: key, projectID: projectID, status: status, priority: priority,
          assignee: assignee, title: title, body: body, createdAt: createdAt, closedAt: closedAt,
          estimate: estimate)
      }
    }
  }

  init() { logger.logLevel = .warning }

  /// The database on the system's event loop, as a request handler gets it.
  private func handle() throws -> any Database {
    guard let databases, let loop else { throw BenchError("\(name): no database is open") }
    guard let database = databases.database(.sqlite, logger: logger, on: loop) else {
      throw BenchError("\(name): the databases are shut down")
    }
    return database
  }

  private func sql() throws -> any SQLDatabase {
    guard let sql = try handle() as? any SQLDatabase else { throw BenchError("\(name): not an SQL database") }
    return sql
  }

  func create(in folder: String) async throws {
    try await close()
    path = folder + "/fluent-tickets.sqlite"
    let group = MultiThreadedEventLoopGroup.singleton
    let databases = Databases(threadPool: .singleton, on: group)
    databases.use(.sqlite(.file(path), sqlLogLevel: .trace), as: .sqlite)
    self.databases = databases
    loop = group.next()
    try await sql().raw("PRAGMA journal_mode = WAL").run()
    try await sql().raw("PRAGMA synchronous = \(unsafeRaw: SQLiteSettings.synchronous)").run()
    try await handle().schema(Record.schema)
      .field("id", .uuid, .identifier(auto: false))
      .field("key", .string, .required)
      .field("projectID", .uuid, .required)
      .field("status", .int64, .required)
      .field("priority", .int64, .required)
      .field("assignee", .uuid)
      .field("title", .string, .required)
      .field("body", .string)
      .field("createdAt", .datetime, .required)
      .field("closedAt", .datetime)
      .field("estimate", .double)
      .unique(on: "key")
      .create()
    try await sql().create(index: "Ticket_projectID_status").on(Record.schema).column("projectID")
      .column("status").run()
    try await sql().create(index: "Ticket_assignee").on(Record.schema).column("assignee").run()
  }

  func insert(_ tickets: [Ticket]) async throws {
    try await handle().transaction { db in
      for start in stride(from: 0, to: tickets.count, by: Self.insertChunk) {
        let chunk = tickets[start..<min(start + Self.insertChunk, tickets.count)]
        try await chunk.map(Record.init).create(on: db)
      }
    }
  }

  func get(_ id: UUID) async throws -> Ticket? {
    try await Record.find(id, on: handle())?.ticket
  }

  func ticket(key: String) async throws -> Ticket? {
    try await Record.query(on: handle()).filter(\.$key == key).first()?.ticket
  }

  func projectPage(_ project: UUID, status: Int64) async throws -> [Ticket] {
    try await Record.query(on: handle()).filter(\.$projectID == project).filter(\.$status == status)
      .sort(\.$createdAt, .descending).sort(\.$id).range(..<50).all().map { try $0.ticket }
  }

  func urgent() async throws -> [Ticket] {
    try await Record.query(on: handle()).filter(\.$priority == 3).filter(\.$estimate > 20.0)
      .sort(\.$createdAt, .descending).sort(\.$id).range(..<100).all().map { try $0.ticket }
  }

  func assignedCount(_ person: UUID) async throws -> Int {
    try await Record.query(on: handle()).filter(\.$assignee == person).count()
  }

  func openEstimate(_ project: UUID) async throws -> Double {
    try await Record.query(on: handle()).filter(\.$projectID == project)
      .filter(\.$status < TicketWorkload.closed).sum(\.$estimate) ?? 0
  }

  func scan() async throws -> [Ticket] {
    try await Record.query(on: handle()).sort(\.$id).all().map { try $0.ticket }
  }

  /// Sets the two fields with the query builder, without reading the tickets first.
  func close(_ tickets: [Ticket], at date: Date) async throws {
    try await handle().transaction { db in
      for ticket in tickets {
        try await Record.query(on: db).filter(\.$id == ticket.id).set(\.$status, to: TicketWorkload.closed)
          .set(\.$closedAt, to: date).update()
      }
    }
  }

  /// Counts the tickets, then deletes them, in one transaction: Fluent's delete does not say
  /// how many rows it removed.
  func deleteClosed(of project: UUID) async throws -> Int {
    try await handle().transaction { db in
      let closed = Record.query(on: db).filter(\.$projectID == project)
        .filter(\.$status == TicketWorkload.closed)
      let count = try await closed.count()
      try await closed.delete()
      return count
    }
  }

  func fileSize() -> Int64 { sqliteSize(path) }

  func close() async throws {
    await databases?.shutdownAsync()
    databases = nil
    loop = nil
  }
}
