import Foundation
import RawPostgres

/// libpq called directly: the physical limit for the PostgreSQL backend over the same socket.
/// The table the Coffer backend makes for `ChatMessage` (typed columns, `text COLLATE "C"`,
/// `timestamptz`, a primary key on id, an index on thread and date); statements prepared once
/// and run with binary parameters and binary results; the bulk insert through
/// `COPY … (FORMAT binary)` (text `COPY` was slower: the server parses every timestamp); the
/// batch update as one statement over arrays of the new values, one round trip. Every read
/// decodes into `ChatMessage` values.
final class RawPostgresSystem: BenchSystem {
  let name = "raw C libpq"
  let isDurable = true
  private var database: PostgresDatabase?
  private var connection: PQConnection?
  /// Connections for the concurrent gets, one per thread, opened on first use.
  private var readers: [Reader] = []

  /// The URL of the system's database, once it has one.
  var databaseURL: String? { database?.url }

  private static let columns = #"id, "threadID", sender, text, date, "isRead""#

  private var open: PQConnection {
    get throws {
      guard let connection else { throw BenchError("\(name): no connection is open") }
      return connection
    }
  }

  func create(in folder: String) async throws {
    try await close()
    let database = try PostgresDatabase("coffer_bench_raw_libpq")
    try database.recreate()
    self.database = database
    let connection = try PQConnection(database.url)
    try connection.execute(
      """
      CREATE TABLE "ChatMessage" (id bigint PRIMARY KEY, "threadID" bigint NOT NULL,
        sender text COLLATE "C" NOT NULL, text text COLLATE "C" NOT NULL, date timestamptz NOT NULL,
        "isRead" boolean NOT NULL);
      CREATE INDEX "ChatMessage_threadID_date" ON "ChatMessage" ("threadID", date);
      """)
    try Self.prepareReads(connection)
    try connection.prepare(
      "commit",
      #"UPDATE "ChatMessage" SET "threadID" = $2, sender = $3, text = $4, date = $5, "isRead" = $6 WHERE id = $1"#
    )
    try connection.prepare(
      "update",
      """
      UPDATE "ChatMessage" AS m SET "threadID" = v."threadID", sender = v.sender, text = v.text,
        date = v.date, "isRead" = v."isRead"
      FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::timestamptz[], $6::boolean[])
        AS v(id, "threadID", sender, text, date, "isRead")
      WHERE m.id = v.id
      """)
    self.connection = connection
  }

  /// The migration benchmark's rename: `ALTER TABLE … RENAME COLUMN` in a transaction of its own.
  func renameColumn(_ from: String, to: String) throws {
    let connection = try open
    try connection.execute("BEGIN")
    try connection.execute(#"ALTER TABLE "ChatMessage" RENAME COLUMN "# + "\(from) TO \(to)")
    try connection.execute("COMMIT")
  }

  /// The migration benchmark's kind change, `threadID` from bigint to text, the way PostgreSQL
  /// changes a column's type: `ALTER COLUMN … TYPE … USING`, which rewrites the table and its
  /// indexes, in a transaction of its own.
  func convertThreadToText() throws {
    let connection = try open
    try connection.execute("BEGIN")
    try connection.execute(
      #"ALTER TABLE "ChatMessage" ALTER COLUMN "threadID" TYPE text COLLATE "C" USING "threadID"::text"#)
    try connection.execute("COMMIT")
  }

  /// Prepares the statements the reads run on `connection`.
  private static func prepareReads(_ connection: PQConnection) throws {
    try connection.prepare("get", #"SELECT \#(columns) FROM "ChatMessage" WHERE id = $1"#)
    try connection.prepare(
      "page", #"SELECT \#(columns) FROM "ChatMessage" WHERE "threadID" = $1 ORDER BY date DESC, id LIMIT 50"#)
    try connection.prepare("scan", #"SELECT \#(columns) FROM "ChatMessage" ORDER BY id"#)
  }

  func bulkInsert(_ messages: [ChatMessage]) async throws {
    var next = 0
    var headerSent = false
    try open.copy(#"COPY "ChatMessage" (\#(Self.columns)) FROM STDIN (FORMAT binary)"#) { buffer in
      if !headerSent {
        buffer.append(contentsOf: PostgresBinary.copyHeader)
        headerSent = true
      }
      guard next < messages.count else {
        buffer.append(contentsOf: PostgresBinary.copyTrailer)
        return false
      }
      let message = messages[next]
      next += 1
      PostgresBinary.append(Int16(6), to: &buffer)
      PostgresBinary.appendField(message.id, to: &buffer)
      PostgresBinary.appendField(message.threadID, to: &buffer)
      PostgresBinary.appendField(message.sender, to: &buffer)
      PostgresBinary.appendField(message.text, to: &buffer)
      PostgresBinary.appendField(message.date, to: &buffer)
      PostgresBinary.appendField(message.isRead, to: &buffer)
      return true
    }
  }

  func get(_ id: Int64) async throws -> ChatMessage? {
    let result = try open.run("get", id)
    return result.count == 0 ? nil : Self.message(result, 0)
  }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] {
    Self.messages(try open.run("page", thread))
  }

  func scan() async throws -> [ChatMessage] {
    Self.messages(try open.run("scan", PQParameters()))
  }

  func update(_ messages: [ChatMessage]) async throws {
    var parameters = PQParameters(capacity: messages.count * 190)
    func array(_ type: PostgresBinary.TypeID, _ element: @escaping (ChatMessage, inout [UInt8]) -> Void) {
      parameters.append { bytes in
        PostgresBinary.appendArray(of: type, count: messages.count, to: &bytes) { bytes in
          for message in messages { element(message, &bytes) }
        }
      }
    }
    array(.int8) { PostgresBinary.appendField($0.id, to: &$1) }
    array(.int8) { PostgresBinary.appendField($0.threadID, to: &$1) }
    array(.text) { PostgresBinary.appendField($0.sender, to: &$1) }
    array(.text) { PostgresBinary.appendField($0.text, to: &$1) }
    array(.timestamptz) { PostgresBinary.appendField($0.date, to: &$1) }
    array(.bool) { PostgresBinary.appendField($0.isRead, to: &$1) }
    let result = try open.run("update", parameters)
    guard result.changed == messages.count else {
      throw BenchError("\(name): the update changed \(result.changed) of \(messages.count) rows")
    }
  }

  func commit(_ message: ChatMessage) async throws {
    var parameters = PQParameters()
    parameters.append { PostgresBinary.append(message.id, to: &$0) }
    parameters.append { PostgresBinary.append(message.threadID, to: &$0) }
    parameters.append { $0.append(contentsOf: message.sender.utf8) }
    parameters.append { $0.append(contentsOf: message.text.utf8) }
    parameters.append { PostgresBinary.append(PostgresBinary.microsecondsSince2000(message.date), to: &$0) }
    parameters.append { $0.append(message.isRead ? 1 : 0) }
    let result = try open.run("commit", parameters)
    guard result.changed == 1 else { throw BenchError("\(name): no message \(message.id) to update") }
  }

  /// One thread per task, each with its own connection, as a C server would run them.
  func concurrentGets(_ ids: [Int64], tasks: Int, until deadline: ContinuousClock.Instant) async throws
    -> [GetTally]?
  {
    guard let database else { throw BenchError("\(name): no database is open") }
    while readers.count < tasks {
      let reader = Reader(try PQConnection(database.url))
      try Self.prepareReads(reader.connection)
      readers.append(reader)
    }
    let readers = Array(self.readers.prefix(tasks))
    let tallies = await onThreads(tasks) { task in
      Swift.Result { () throws -> GetTally in
        let connection = readers[task].connection
        var tally = GetTally()
        for position in stride(from: task, to: ids.count, by: tasks) {
          if tally.done % 100 == 0 && ContinuousClock.now >= deadline { break }
          let result = try connection.run("get", ids[position])
          tally.threadSum &+= result.count == 0 ? -1 : result.int64(0, 1)
          tally.done += 1
        }
        return tally
      }
    }
    return try tallies.map { try $0.get() }
  }

  func fileSize() -> Int64 { database?.size() ?? 0 }

  func close() async throws {
    connection = nil
    readers = []
  }

  private static func messages(_ result: PQResult) -> [ChatMessage] {
    var messages: [ChatMessage] = []
    messages.reserveCapacity(result.count)
    for row in 0..<Int32(result.count) { messages.append(message(result, row)) }
    return messages
  }

  private static func message(_ result: PQResult, _ row: Int32) -> ChatMessage {
    ChatMessage(
      id: result.int64(row, 0), threadID: result.int64(row, 1), sender: result.string(row, 2),
      text: result.string(row, 3), date: result.date(row, 4), isRead: result.bool(row, 5))
  }
}

/// A reader thread's connection. `@unchecked Sendable` without a lock: each one is handed to
/// exactly one thread per round of concurrent gets, and `onThreads` joins those threads before
/// the system touches its readers again.
private final class Reader: @unchecked Sendable {
  let connection: PQConnection
  init(_ connection: PQConnection) { self.connection = connection }
}
