import CSQLite
@_spi(Backend) import Coffer
import Foundation

/// A compiled statement of one ``SQLiteConnection``, reused for every call of the same shape.
///
/// Values are bound straight from ``Coffer/Value``s with `sqlite3_bind_*`. The bytes of
/// strings, documents, byte buffers and UUIDs are first copied into the statement's own
/// scratch space and bound from there without SQLite copying them again (`SQLITE_STATIC`); the
/// space stays unchanged until the statement is reset and its bindings cleared, before
/// ``withBindings(_:_:)`` returns. Rows are read straight into ``Coffer/Row``s.
final class SQLiteStatement {
  let handle: OpaquePointer
  unowned let connection: SQLiteConnection
  /// Where bound bytes live while the statement runs; grown, never shrunk. Only the task that
  /// holds the statement's connection uses it.
  @exclusivity(unchecked) private var scratch = UnsafeMutableRawBufferPointer(start: nil, count: 0)

  init(_ handle: OpaquePointer, connection: SQLiteConnection) {
    self.handle = handle
    self.connection = connection
  }

  deinit { scratch.deallocate() }

  func finalize() { sqlite3_finalize(handle) }

  /// Binds `values` to parameters 1…n, runs `body`, then resets the statement and clears the
  /// bindings (so that no pointer into the scratch space outlives the call).
  func withBindings<R>(_ values: [Value], _ body: () throws -> R) throws -> R {
    defer {
      sqlite3_reset(handle)
      sqlite3_clear_bindings(handle)
    }
    try bind(values)
    return try body()
  }

  /// Binds every value, copying the bytes of those SQLite would otherwise have to copy into
  /// the scratch space, which is made large enough first so that it does not move.
  private func bind(_ values: [Value]) throws {
    var needed = 0
    for value in values { needed += Self.byteCount(value) }
    if needed > scratch.count {
      scratch.deallocate()
      scratch = .allocate(byteCount: max(needed, 2 * scratch.count, 256), alignment: 8)
    }
    var used = 0
    /// Copies `bytes` into the scratch space and returns where they now are.
    func place(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
      let target = UnsafeMutableRawBufferPointer(rebasing: scratch[used..<(used + bytes.count)])
      target.copyMemory(from: bytes)
      used += bytes.count
      return UnsafeRawBufferPointer(target)
    }
    for (index, value) in values.enumerated() {
      let parameter = Int32(index + 1)
      let code: Int32
      switch value {
      case .null: code = sqlite3_bind_null(handle, parameter)
      case .bool(let value): code = sqlite3_bind_int64(handle, parameter, value ? 1 : 0)
      case .int(let value): code = sqlite3_bind_int64(handle, parameter, value)
      case .double(let value): code = sqlite3_bind_double(handle, parameter, value)
      case .date(let value):
        code = sqlite3_bind_int64(handle, parameter, Value.microseconds(since1970: value))
      case .string(var text): code = text.withUTF8 { bindText(place(UnsafeRawBufferPointer($0)), parameter) }
      case .document(let data): code = data.withUnsafeBytes { bindText(place($0), parameter) }
      case .bytes(let data): code = data.withUnsafeBytes { bindBlob(place($0), parameter) }
      case .uuid(let uuid): code = withUnsafeBytes(of: uuid.uuid) { bindBlob(place($0), parameter) }
      }
      try check(code)
    }
  }

  /// How many bytes of a value ``bind(_:)`` places in the scratch space.
  private static func byteCount(_ value: Value) -> Int {
    switch value {
    case .string(let text): text.utf8.count
    case .document(let data), .bytes(let data): data.count
    case .uuid: 16
    default: 0
    }
  }

  private func bindText(_ buffer: UnsafeRawBufferPointer, _ parameter: Int32) -> Int32 {
    guard let base = buffer.baseAddress, buffer.count > 0 else {
      return sqlite3_bind_text(handle, parameter, "", 0, nil)
    }
    return sqlite3_bind_text64(
      handle, parameter, base.assumingMemoryBound(to: CChar.self), sqlite3_uint64(buffer.count), nil,
      UInt8(SQLITE_UTF8))
  }

  private func bindBlob(_ buffer: UnsafeRawBufferPointer, _ parameter: Int32) -> Int32 {
    guard let base = buffer.baseAddress, buffer.count > 0 else {
      return sqlite3_bind_zeroblob(handle, parameter, 0)
    }
    return sqlite3_bind_blob64(handle, parameter, base, sqlite3_uint64(buffer.count), nil)
  }

  private func check(_ code: Int32) throws {
    guard code == SQLITE_OK else { throw connection.failure(code, while: "binding a value") }
  }

  /// Steps once: `true` with a row to read, `false` when done.
  func step() throws -> Bool {
    switch sqlite3_step(handle) {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    case let code: throw StepFailure(code: code)
    }
  }

  /// Runs a statement that returns no rows.
  func run(_ values: [Value]) throws {
    try withBindings(values) {
      do {
        while try step() {}
      } catch let failure as StepFailure {
        throw connection.failure(failure.code, while: "writing")
      }
    }
  }

  /// Every row the statement returns, read as values of `kinds`.
  func rows(_ values: [Value], kinds: [FieldKind]) throws -> [Row] {
    try withBindings(values) {
      var rows: [Row] = []
      while try stepReading() { rows.append(try row(kinds)) }
      return rows
    }
  }

  /// Steps for a read, turning a failure into a ``Coffer/CofferError``.
  func stepReading() throws -> Bool {
    do {
      return try step()
    } catch let failure as StepFailure {
      throw connection.failure(failure.code, while: "reading")
    }
  }

  /// The current row, one value per kind, from columns 0…n-1.
  func row(_ kinds: [FieldKind]) throws -> Row {
    var values: [Value] = []
    values.reserveCapacity(kinds.count)
    for (column, kind) in kinds.enumerated() { values.append(try value(at: Int32(column), kind)) }
    return Row(values)
  }

  /// The value of a column read as a field kind.
  @inline(__always)
  func value(at column: Int32, _ kind: FieldKind) throws -> Value {
    if sqlite3_column_type(handle, column) == SQLITE_NULL { return .null }
    switch kind {
    case .int: return .int(sqlite3_column_int64(handle, column))
    case .bool: return .bool(sqlite3_column_int64(handle, column) != 0)
    case .double: return .double(sqlite3_column_double(handle, column))
    case .date: return .date(Value.date(microsecondsSince1970: sqlite3_column_int64(handle, column)))
    case .string: return .string(string(at: column))
    case .bytes: return .bytes(data(at: column))
    case .document: return .document(data(at: column))
    case .uuid:
      let count = Int(sqlite3_column_bytes(handle, column))
      guard count == 16, let base = sqlite3_column_blob(handle, column) else {
        throw CofferError(
          .corruptStore,
          "A UUID column holds \(count) bytes instead of 16; something other than Coffer wrote it. "
            + "Fix or remove that row with the sqlite3 tool.",
          store: connection.storeName, path: connection.path)
      }
      // Zeroed scratch space: `UUID()` would read /dev/urandom for every value read.
      var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
      withUnsafeMutableBytes(of: &uuid) {
        $0.copyMemory(from: UnsafeRawBufferPointer(start: base, count: 16))
      }
      return .uuid(UUID(uuid: uuid))
    }
  }

  /// A column's text, byte for byte.
  func string(at column: Int32) -> String { text(at: column) ?? "" }

  /// A column's text, byte for byte, or `nil` when SQLite gives no text pointer (a null).
  func text(at column: Int32) -> String? {
    guard let text = sqlite3_column_text(handle, column) else { return nil }
    let count = Int(sqlite3_column_bytes(handle, column))
    return String(decoding: UnsafeBufferPointer(start: text, count: count), as: UTF8.self)
  }

  /// A column's bytes.
  func data(at column: Int32) -> Data {
    guard let blob = sqlite3_column_blob(handle, column) else { return Data() }
    return Data(bytes: blob, count: Int(sqlite3_column_bytes(handle, column)))
  }

  /// A column as an integer.
  func int(at column: Int32) -> Int64 { sqlite3_column_int64(handle, column) }

  /// Whether a column holds exactly what binding `value` stores: the same storage class and
  /// the same integer, the same double bit for bit (`-0.0` is not `0.0`), the same bytes.
  func holds(_ value: Value, at column: Int32) -> Bool {
    let type = sqlite3_column_type(handle, column)
    func bytes(_ expected: UnsafeRawBufferPointer, as storage: Int32) -> Bool {
      guard type == storage else { return false }
      let count = Int(sqlite3_column_bytes(handle, column))
      guard count == expected.count else { return false }
      guard count > 0 else { return true }
      let stored =
        storage == SQLITE_TEXT
        ? UnsafeRawPointer(sqlite3_column_text(handle, column)) : sqlite3_column_blob(handle, column)
      guard let stored, let base = expected.baseAddress else { return false }
      return memcmp(stored, base, count) == 0
    }
    switch value {
    case .null: return type == SQLITE_NULL
    case .bool(let flag):
      return type == SQLITE_INTEGER && sqlite3_column_int64(handle, column) == (flag ? 1 : 0)
    case .int(let number): return type == SQLITE_INTEGER && sqlite3_column_int64(handle, column) == number
    case .date(let date):
      return type == SQLITE_INTEGER
        && sqlite3_column_int64(handle, column) == Value.microseconds(since1970: date)
    case .double(let number):
      return type == SQLITE_FLOAT && sqlite3_column_double(handle, column).bitPattern == number.bitPattern
    case .string(var text): return text.withUTF8 { bytes(UnsafeRawBufferPointer($0), as: SQLITE_TEXT) }
    case .document(let data): return data.withUnsafeBytes { bytes($0, as: SQLITE_TEXT) }
    case .bytes(let data): return data.withUnsafeBytes { bytes($0, as: SQLITE_BLOB) }
    case .uuid(let uuid): return withUnsafeBytes(of: uuid.uuid) { bytes($0, as: SQLITE_BLOB) }
    }
  }
}

/// A step that failed; callers name what they were doing.
struct StepFailure: Error {
  let code: Int32
}
