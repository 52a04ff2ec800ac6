import Foundation
import RawSQLite

/// libsqlite3 called directly for the ticket workload, with statements compiled once: the
/// physical limit for the SQLite backend. The table has the layout Coffer gives it — `STRICT`,
/// `WITHOUT ROWID` clustered on the UUID id (16-byte blobs), dates as integer microseconds, the
/// same three indexes — with the same journal mode and synchronous setting.
final class RawSQLiteTicketSystem: TicketSystem {
  let name = "raw C libsqlite3"
  private var connection: RawSQLiteConnection?
  private var path = ""

  private static let columns =
    "id, key, projectID, status, priority, assignee, title, body, createdAt, closedAt, estimate"

  func create(in folder: String) async throws {
    try await close()
    path = folder + "/raw-tickets.sqlite"
    connection = try RawSQLiteConnection(path: path)
    try execute(
      """
      CREATE TABLE "Ticket" (id BLOB PRIMARY KEY NOT NULL, key TEXT NOT NULL, projectID BLOB NOT NULL,
        status INTEGER NOT NULL, priority INTEGER NOT NULL, assignee BLOB, title TEXT NOT NULL, body TEXT,
        createdAt INTEGER NOT NULL, closedAt INTEGER, estimate REAL) STRICT, WITHOUT ROWID
      """)
    try execute(#"CREATE UNIQUE INDEX "Ticket_key" ON "Ticket" (key)"#)
    try execute(#"CREATE INDEX "Ticket_projectID_status" ON "Ticket" (projectID, status)"#)
    try execute(#"CREATE INDEX "Ticket_assignee" ON "Ticket" (assignee)"#)
  }

  func insert(_ tickets: [Ticket]) async throws {
    try execute("BEGIN IMMEDIATE")
    let insert = try statement(
      "INSERT INTO \"Ticket\" (\(Self.columns)) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)")
    for ticket in tickets {
      defer { sqlite3_reset(insert) }
      try bind(ticket, to: insert)
      guard sqlite3_step(insert) == SQLITE_DONE else { throw failure() }
    }
    try execute("COMMIT")
  }

  func get(_ id: UUID) async throws -> Ticket? {
    try first("SELECT \(Self.columns) FROM \"Ticket\" WHERE id = ?1") { bind(id, at: 1, of: $0) }
  }

  func ticket(key: String) async throws -> Ticket? {
    try first("SELECT \(Self.columns) FROM \"Ticket\" WHERE key = ?1") { bind(key, at: 1, of: $0) }
  }

  func projectPage(_ project: UUID, status: Int64) async throws -> [Ticket] {
    try all(
      "SELECT \(Self.columns) FROM \"Ticket\" WHERE projectID = ?1 AND status = ?2 "
        + "ORDER BY createdAt DESC, id LIMIT 50"
    ) { statement in
      bind(project, at: 1, of: statement)
      sqlite3_bind_int64(statement, 2, status)
    }
  }

  func urgent() async throws -> [Ticket] {
    try all(
      "SELECT \(Self.columns) FROM \"Ticket\" WHERE priority = 3 AND estimate > 20.0 "
        + "ORDER BY createdAt DESC, id LIMIT 100"
    ) { _ in }
  }

  func assignedCount(_ person: UUID) async throws -> Int {
    let select = try statement(#"SELECT count(*) FROM "Ticket" WHERE assignee = ?1"#)
    defer { sqlite3_reset(select) }
    bind(person, at: 1, of: select)
    guard try step(select) else { return 0 }
    return Int(sqlite3_column_int64(select, 0))
  }

  func openEstimate(_ project: UUID) async throws -> Double {
    let select = try statement(#"SELECT total(estimate) FROM "Ticket" WHERE projectID = ?1 AND status < 4"#)
    defer { sqlite3_reset(select) }
    bind(project, at: 1, of: select)
    guard try step(select) else { return 0 }
    return sqlite3_column_double(select, 0)
  }

  func scan() async throws -> [Ticket] {
    try all("SELECT \(Self.columns) FROM \"Ticket\" ORDER BY id") { _ in }
  }

  /// Only the two columns that change.
  func close(_ tickets: [Ticket], at date: Date) async throws {
    try execute("BEGIN IMMEDIATE")
    let update = try statement(#"UPDATE "Ticket" SET status = ?1, closedAt = ?2 WHERE id = ?3"#)
    let closedAt = TicketWorkload.microseconds(date)
    for ticket in tickets {
      defer { sqlite3_reset(update) }
      sqlite3_bind_int64(update, 1, TicketWorkload.closed)
      sqlite3_bind_int64(update, 2, closedAt)
      bind(ticket.id, at: 3, of: update)
      guard sqlite3_step(update) == SQLITE_DONE else { throw failure() }
    }
    try execute("COMMIT")
  }

  func deleteClosed(of project: UUID) async throws -> Int {
    try execute("BEGIN IMMEDIATE")
    let delete = try statement(#"DELETE FROM "Ticket" WHERE projectID = ?1 AND status = 4"#)
    do {
      defer { sqlite3_reset(delete) }
      bind(project, at: 1, of: delete)
      guard sqlite3_step(delete) == SQLITE_DONE else { throw failure() }
    }
    let count = Int(sqlite3_changes(try open().handle))
    try execute("COMMIT")
    return count
  }

  func fileSize() -> Int64 { sqliteSize(path) }

  func close() async throws {
    connection?.close()
    connection = nil
  }

  // MARK: - Plumbing

  private func first(_ sql: String, _ bindings: (OpaquePointer) -> Void) throws -> Ticket? {
    let select = try statement(sql)
    defer { sqlite3_reset(select) }
    bindings(select)
    return try step(select) ? Self.ticket(select) : nil
  }

  private func all(_ sql: String, _ bindings: (OpaquePointer) -> Void) throws -> [Ticket] {
    let select = try statement(sql)
    defer { sqlite3_reset(select) }
    bindings(select)
    var tickets: [Ticket] = []
    while try step(select) { tickets.append(Self.ticket(select)) }
    return tickets
  }

  private func open() throws -> RawSQLiteConnection {
    guard let connection else { throw BenchError("\(name): no database is open") }
    return connection
  }

  private func execute(_ sql: String) throws { try open().execute(sql) }

  private func failure() -> BenchError { connection?.failure() ?? BenchError("\(name): no database is open") }

  private func statement(_ sql: String) throws -> OpaquePointer { try open().statement(sql) }

  private func step(_ statement: OpaquePointer) throws -> Bool { try open().step(statement) }

  /// `SQLITE_TRANSIENT`: SQLite copies the bytes before the call returns.
  private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

  private func bind(_ id: UUID, at index: Int32, of statement: OpaquePointer) {
    withUnsafeBytes(of: id.uuid) { bytes in
      _ = sqlite3_bind_blob(statement, index, bytes.baseAddress, 16, Self.transient)
    }
  }

  private func bind(_ text: String, at index: Int32, of statement: OpaquePointer) {
    var text = text
    text.withUTF8 { bytes in
      _ = sqlite3_bind_text(statement, index, bytes.baseAddress, Int32(bytes.count), Self.transient)
    }
  }

  private func bind(_ ticket: Ticket, to statement: OpaquePointer) throws {
    bind(ticket.id, at: 1, of: statement)
    bind(ticket.key, at: 2, of: statement)
    bind(ticket.projectID, at: 3, of: statement)
    sqlite3_bind_int64(statement, 4, ticket.status)
    sqlite3_bind_int64(statement, 5, ticket.priority)
    if let assignee = ticket.assignee {
      bind(assignee, at: 6, of: statement)
    } else {
      sqlite3_bind_null(statement, 6)
    }
    bind(ticket.title, at: 7, of: statement)
    if let body = ticket.body { bind(body, at: 8, of: statement) } else { sqlite3_bind_null(statement, 8) }
    sqlite3_bind_int64(statement, 9, TicketWorkload.microseconds(ticket.createdAt))
    if let closedAt = ticket.closedAt {
      sqlite3_bind_int64(statement, 10, TicketWorkload.microseconds(closedAt))
    } else {
      sqlite3_bind_null(statement, 10)
    }
    if let estimate = ticket.estimate {
      sqlite3_bind_double(statement, 11, estimate)
    } else {
      sqlite3_bind_null(statement, 11)
    }
  }

  private static func ticket(_ statement: OpaquePointer) -> Ticket {
    Ticket(
      id: uuid(statement, 0) ?? UUID(uuid: zeroUUID), key: text(statement, 1) ?? "",
      projectID: uuid(statement, 2) ?? UUID(uuid: zeroUUID), status: sqlite3_column_int64(statement, 3),
      priority: sqlite3_column_int64(statement, 4), assignee: uuid(statement, 5),
      title: text(statement, 6) ?? "",
      body: text(statement, 7), createdAt: TicketWorkload.date(sqlite3_column_int64(statement, 8)),
      closedAt: sqlite3_column_type(statement, 9) == SQLITE_NULL
        ? nil : TicketWorkload.date(sqlite3_column_int64(statement, 9)),
      estimate: sqlite3_column_type(statement, 10) == SQLITE_NULL ? nil : sqlite3_column_double(statement, 10)
    )
  }

  private static func text(_ statement: OpaquePointer, _ column: Int32) -> String? {
    guard let bytes = sqlite3_column_text(statement, column) else { return nil }
    let count = Int(sqlite3_column_bytes(statement, column))
    return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
  }

  private static func uuid(_ statement: OpaquePointer, _ column: Int32) -> UUID? {
    guard sqlite3_column_bytes(statement, column) == 16, let bytes = sqlite3_column_blob(statement, column)
    else { return nil }
    var value = zeroUUID
    withUnsafeMutableBytes(of: &value) {
      $0.copyMemory(from: UnsafeRawBufferPointer(start: bytes, count: 16))
    }
    return UUID(uuid: value)
  }
}

/// The all-zero UUID's bytes, for a column that is not a UUID.
private let zeroUUID: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
