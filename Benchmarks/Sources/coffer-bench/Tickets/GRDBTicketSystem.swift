import Foundation
import GRDB

/// GRDB's Codable record API for the ticket workload, used as its documentation shows: a
/// `DatabasePool` (WAL), a record type, the query interface, `update(_:columns:)` for the two
/// changed columns. The table has the same shape as the raw C system's (UUIDs as 16-byte blobs,
/// `WITHOUT ROWID`), dates as seconds since 1970, and the same synchronous setting.
final class GRDBTicketSystem: TicketSystem {
  let name = "GRDB records"
  /// GRDB's `timeIntervalSince1970` decoding keeps milliseconds.
  let dateError: Int64 = 1_000
  private var pool: GRDBPool?
  private var path = ""

  struct Record: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "Ticket"
    static let databaseDateEncodingStrategy = DatabaseDateEncodingStrategy.timeIntervalSince1970
    static let databaseDateDecodingStrategy = DatabaseDateDecodingStrategy.timeIntervalSince1970
    var id: UUID
    var key: String
    var projectID: UUID
    var status: Int64
    var priority: Int64
    var assignee: UUID?
    var title: String
    var body: String?
    var createdAt: Date
    var closedAt: Date?
    var estimate: Double?

    init(_ ticket: Ticket) {
      (id, key, projectID, status, priority, assignee) = (
        ticket.id, ticket.key, ticket.projectID, ticket.status, ticket.priority, ticket.assignee
      )
      (title, body, createdAt, closedAt, estimate) = (
        ticket.title, ticket.body, ticket.createdAt, ticket.closedAt, ticket.estimate
      )
    }

    var ticket: Ticket {
      Ticket(
        id: id, key: key, projectID: projectID, status: status, priority: priority, assignee: assignee,
        title: title, body: body, createdAt: createdAt, closedAt: closedAt, estimate: estimate)
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
    path = folder + "/grdb-tickets.sqlite"
    pool = try GRDBPool(path: path)
    try write { db in
      try db.create(table: Record.databaseTableName, options: [.withoutRowID]) { table in
        table.primaryKey("id", .blob)
        table.column("key", .text).notNull().unique()
        table.column("projectID", .blob).notNull()
        table.column("status", .integer).notNull()
        table.column("priority", .integer).notNull()
        table.column("assignee", .blob)
        table.column("title", .text).notNull()
        table.column("body", .text)
        table.column("createdAt", .double).notNull()
        table.column("closedAt", .double)
        table.column("estimate", .double)
      }
      try db.create(index: "Ticket_projectID_status", on: "Ticket", columns: ["projectID", "status"])
      try db.create(index: "Ticket_assignee", on: "Ticket", columns: ["assignee"])
    }
  }

  func insert(_ tickets: [Ticket]) async throws {
    try write { db in for ticket in tickets { try Record(ticket).insert(db) } }
  }

  func get(_ id: UUID) async throws -> Ticket? {
    try read { db in try Record.fetchOne(db, key: id)?.ticket }
  }

  func ticket(key: String) async throws -> Ticket? {
    try read { db in try Record.filter(Column("key") == key).fetchOne(db)?.ticket }
  }

  func projectPage(_ project: UUID, status: Int64) async throws -> [Ticket] {
    try read { db in
      try Record.filter(Column("projectID") == project && Column("status") == status)
        .order(Column("createdAt").desc, Column("id")).limit(50).fetchAll(db).map(\.ticket)
    }
  }

  func urgent() async throws -> [Ticket] {
    try read { db in
      try Record.filter(Column("priority") == 3 && Column("estimate") > 20.0)
        .order(Column("createdAt").desc, Column("id")).limit(100).fetchAll(db).map(\.ticket)
    }
  }

  func assignedCount(_ person: UUID) async throws -> Int {
    try read { db in try Record.filter(Column("assignee") == person).fetchCount(db) }
  }

  func openEstimate(_ project: UUID) async throws -> Double {
    try read { db in
      try Record.filter(Column("projectID") == project && Column("status") < TicketWorkload.closed)
        .select(total(Column("estimate")), as: Double.self).fetchOne(db) ?? 0
    }
  }

  func scan() async throws -> [Ticket] {
    try read { db in try Record.order(Column("id")).fetchAll(db).map(\.ticket) }
  }

  func close(_ tickets: [Ticket], at date: Date) async throws {
    try write { db in
      for ticket in tickets {
        try Record(ticket.closed(at: date)).update(db, columns: ["status", "closedAt"])
      }
    }
  }

  func deleteClosed(of project: UUID) async throws -> Int {
    try write { db in
      try Record.filter(Column("projectID") == project && Column("status") == TicketWorkload.closed)
        .deleteAll(db)
    }
  }

  private func read<T>(_ body: (Database) throws -> T) throws -> T { try open.read(body) }

  private func write<T>(_ body: (Database) throws -> T) throws -> T { try open.write(body) }

  func fileSize() -> Int64 { sqliteSize(path) }

  func close() async throws {
    try pool?.close()
    pool = nil
  }
}
