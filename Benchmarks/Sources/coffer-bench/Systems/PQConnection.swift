import Foundation
import RawPostgres

/// One libpq connection, used blocking, as a C program would: simple queries for setup, prepared
/// statements with binary parameters and binary results for the timed work.
///
/// Not thread-safe, like the `PGconn` it wraps: one thread uses it at a time.
final class PQConnection {
  private let connection: OpaquePointer

  /// Connects to `url` (a `postgres://` URL) and fails with the server's reason.
  init(_ url: String) throws {
    guard let connection = PQconnectdb(url) else { throw BenchError("PQconnectdb: out of memory") }
    guard PQstatus(connection) == CONNECTION_OK else {
      let reason = String(cString: PQerrorMessage(connection))
      PQfinish(connection)
      throw BenchError("cannot connect to PostgreSQL: \(reason)")
    }
    // Notices (such as "database … does not exist, skipping") are not errors: keep them out of the output.
    PQsetNoticeProcessor(connection, { _, _ in }, nil)
    self.connection = connection
  }

  deinit { PQfinish(connection) }

  /// The `PGconn`, for calls this type does not wrap.
  var handle: OpaquePointer { connection }

  /// A name quoted as an SQL identifier.
  static func quoted(_ identifier: String) -> String {
    "\"" + identifier.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }

  /// Runs SQL text without parameters (one or more statements).
  func execute(_ sql: String) throws {
    _ = try PQResult(PQexec(connection, sql), self, sql)
  }

  /// The first column of the first row a text query returns.
  func scalar(_ sql: String) throws -> String {
    let result = try PQResult(PQexec(connection, sql), self, sql)
    guard result.count > 0, let value = PQgetvalue(result.result, 0, 0) else {
      throw BenchError("\(sql): no row")
    }
    return String(cString: value)
  }

  /// Prepares `sql` once under `name`, letting the server infer the parameter types.
  func prepare(_ name: String, _ sql: String) throws {
    _ = try PQResult(PQprepare(connection, name, sql, 0, nil), self, sql)
  }

  /// Runs the prepared statement `name` with one binary `bigint` parameter; binary results.
  func run(_ name: String, _ value: Int64) throws -> PQResult {
    var bigEndian = value.bigEndian
    return try withUnsafeBytes(of: &bigEndian) { bytes in
      var pointer = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
      var length: Int32 = 8
      var format: Int32 = 1
      return try PQResult(
        PQexecPrepared(connection, name, 1, &pointer, &length, &format, 1), self, name)
    }
  }

  /// Runs the prepared statement `name` with binary `parameters`; binary results.
  func run(_ name: String, _ parameters: PQParameters) throws -> PQResult {
    try parameters.withPointers { values, lengths, formats, count in
      try PQResult(PQexecPrepared(connection, name, count, values, lengths, formats, 1), self, name)
    }
  }

  /// Streams rows into `COPY … FROM STDIN`: `fill` appends bytes to the buffer it is handed and
  /// returns false when done; full buffers are sent as they fill.
  func copy(_ sql: String, _ fill: (inout [UInt8]) -> Bool) throws {
    _ = try PQResult(PQexec(connection, sql), self, sql, expecting: PGRES_COPY_IN)
    var buffer: [UInt8] = []
    buffer.reserveCapacity(1 << 20)
    var more = true
    while more {
      buffer.removeAll(keepingCapacity: true)
      while more && buffer.count < 1 << 20 { more = fill(&buffer) }
      let sent = buffer.withUnsafeBufferPointer { bytes in
        bytes.withMemoryRebound(to: CChar.self) { PQputCopyData(connection, $0.baseAddress, Int32($0.count)) }
      }
      guard sent == 1 else { throw BenchError("PQputCopyData: \(message)") }
    }
    guard PQputCopyEnd(connection, nil) == 1 else { throw BenchError("PQputCopyEnd: \(message)") }
    _ = try PQResult(PQgetResult(connection), self, sql)
    while let extra = PQgetResult(connection) { PQclear(extra) }
  }

  /// The connection's last error, as libpq words it.
  var message: String {
    String(cString: PQerrorMessage(connection)).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}

/// A result libpq returned, cleared when released; reads binary columns.
final class PQResult {
  let result: OpaquePointer

  /// Takes `result`, or fails with the server's message when it is missing or not `expecting`
  /// (by default: a command or rows).
  init(
    _ result: OpaquePointer?, _ connection: PQConnection, _ what: String,
    expecting: ExecStatusType? = nil
  ) throws {
    guard let result else { throw BenchError("\(what): \(connection.message)") }
    let status = PQresultStatus(result)
    let wanted = expecting.map { status == $0 } ?? (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
    guard wanted else {
      let reason = String(cString: PQresultErrorMessage(result)).trimmingCharacters(
        in: .whitespacesAndNewlines)
      PQclear(result)
      throw BenchError("\(what): \(reason)")
    }
    self.result = result
  }

  deinit { PQclear(result) }

  /// The number of rows.
  var count: Int { Int(PQntuples(result)) }

  /// How many rows an `INSERT`, `UPDATE` or `DELETE` changed.
  var changed: Int { Int(String(cString: PQcmdTuples(result))) ?? 0 }

  /// The raw bytes of a column (empty for null).
  @inline(__always)
  func bytes(_ row: Int32, _ column: Int32) -> UnsafeRawBufferPointer {
    UnsafeRawBufferPointer(
      start: PQgetvalue(result, row, column), count: Int(PQgetlength(result, row, column)))
  }

  /// A binary `bigint`.
  @inline(__always)
  func int64(_ row: Int32, _ column: Int32) -> Int64 {
    Int64(bigEndian: bytes(row, column).loadUnaligned(as: Int64.self))
  }

  /// A `text` column's UTF-8 bytes as a string.
  @inline(__always)
  func string(_ row: Int32, _ column: Int32) -> String {
    String(decoding: bytes(row, column), as: UTF8.self)
  }

  /// A binary `boolean`.
  @inline(__always)
  func bool(_ row: Int32, _ column: Int32) -> Bool { bytes(row, column).first == 1 }

  /// A binary `timestamptz`: microseconds since 2000-01-01 UTC.
  @inline(__always)
  func date(_ row: Int32, _ column: Int32) -> Date {
    PostgresBinary.date(microsecondsSince2000: int64(row, column))
  }
}

/// Parameters in PostgreSQL's binary format, gathered in one buffer.
struct PQParameters {
  private var bytes: [UInt8] = []
  private var offsets: [Int] = []
  private var lengths: [Int32] = []

  /// Parameters with room for `capacity` bytes.
  init(capacity: Int = 256) { bytes.reserveCapacity(capacity) }

  /// Starts the next parameter; what `writer` appends is its value.
  mutating func append(_ writer: (inout [UInt8]) -> Void) {
    let start = bytes.count
    writer(&bytes)
    offsets.append(start)
    lengths.append(Int32(bytes.count - start))
  }

  /// The pointer arrays `PQexecPrepared` takes, valid inside `body`.
  func withPointers<T>(
    _ body: (
      UnsafePointer<UnsafePointer<CChar>?>?, UnsafePointer<Int32>?, UnsafePointer<Int32>?, Int32
    ) throws -> T
  ) rethrows -> T {
    let formats = [Int32](repeating: 1, count: lengths.count)
    return try bytes.withUnsafeBytes { buffer in
      let pointers: [UnsafePointer<CChar>?] = offsets.map { offset in
        buffer.baseAddress.map { $0.advanced(by: offset).assumingMemoryBound(to: CChar.self) }
      }
      return try pointers.withUnsafeBufferPointer { pointers in
        try lengths.withUnsafeBufferPointer { lengths in
          try formats.withUnsafeBufferPointer { formats in
            try body(pointers.baseAddress, lengths.baseAddress, formats.baseAddress, Int32(lengths.count))
          }
        }
      }
    }
  }
}
