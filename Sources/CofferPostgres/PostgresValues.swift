@_spi(Backend) import Coffer
import Foundation
import NIOCore
import PostgresNIO

/// How Coffer's values travel to and from PostgreSQL: binary wire formats, one column type per
/// field kind.
///
/// | kind | column | wire |
/// |---|---|---|
/// | int | `bigint` | 8-byte integer |
/// | double | `double precision` | IEEE 754 bits: -0.0 and ±infinity kept |
/// | string | `text COLLATE "C"` | UTF-8, see ``PostgresText`` |
/// | bytes | `bytea` | the bytes |
/// | bool | `boolean` | one byte |
/// | uuid | `uuid` | 16 bytes |
/// | date | `timestamptz` | microseconds since 2000-01-01 UTC |
/// | document | `text COLLATE "C"` | the document's canonical JSON, byte for byte |
enum PostgresValues {
  /// Microseconds from 1970-01-01 to 2000-01-01, PostgreSQL's epoch.
  static let epochOffset: Int64 = 946_684_800_000_000

  /// The column type of a field kind.
  static func columnType(_ kind: FieldKind) -> String {
    switch kind {
    case .int: "bigint"
    case .double: "double precision"
    case .string, .document: #"text COLLATE "C""#
    case .bytes: "bytea"
    case .bool: "boolean"
    case .uuid: "uuid"
    case .date: "timestamptz"
    }
  }

  /// The type PostgreSQL reports for a column of a field kind (`format_type` of the column),
  /// to recognize a table changed behind Coffer's back.
  static func reportedType(_ kind: FieldKind) -> String {
    switch kind {
    case .int: "bigint"
    case .double: "double precision"
    case .string, .document: "text"
    case .bytes: "bytea"
    case .bool: "boolean"
    case .uuid: "uuid"
    case .date: "timestamp with time zone"
    }
  }

  /// The wire type of a value of a kind.
  static func dataType(_ kind: FieldKind) -> PostgresDataType {
    switch kind {
    case .int: .int8
    case .double: .float8
    case .string, .document: .text
    case .bytes: .bytea
    case .bool: .bool
    case .uuid: .uuid
    case .date: .timestamptz
    }
  }

  /// The wire type of an array of values of a kind.
  static func arrayType(_ kind: FieldKind) -> PostgresDataType {
    switch kind {
    case .int: .int8Array
    case .double: .float8Array
    case .string, .document: .textArray
    case .bytes: .byteaArray
    case .bool: .boolArray
    case .uuid: .uuidArray
    case .date: .timestamptzArray
    }
  }

  /// The SQL name of an array of a kind, for casts: `bigint[]`.
  static func arrayCast(_ kind: FieldKind) -> String {
    switch kind {
    case .string, .document: "text[]"
    default: columnType(kind) + "[]"
    }
  }

  /// Writes a present value's wire bytes (without the length) into a buffer.
  static func write(_ value: Value, into buffer: inout ByteBuffer) {
    switch value {
    case .null: break
    case .int(let number): buffer.writeInteger(number)
    case .double(let number): buffer.writeInteger(number.bitPattern)
    case .string(let text): PostgresText.write(text, into: &buffer)
    case .document(let data): PostgresText.write(data, into: &buffer)
    case .bytes(let data): buffer.writeBytes(data)
    case .bool(let flag): buffer.writeInteger(flag ? 1 : 0, as: UInt8.self)
    case .uuid(let uuid):
      _ = withUnsafeBytes(of: uuid.uuid) { buffer.writeBytes($0) }
    case .date(let date):
      let micros = Value.microseconds(since1970: date)
      let (shifted, overflow) = micros.subtractingReportingOverflow(epochOffset)
      buffer.writeInteger(overflow ? Int64.min : shifted)
    }
  }

  /// The value a cell holds, read as a field of `kind`.
  static func read(_ bytes: ByteBuffer?, as kind: FieldKind) throws -> Value {
    guard var bytes else { return .null }
    switch kind {
    case .int:
      guard let number = bytes.readInteger(as: Int64.self) else { throw malformed(kind) }
      return .int(number)
    case .double:
      guard let bits = bytes.readInteger(as: UInt64.self) else { throw malformed(kind) }
      return .double(Double(bitPattern: bits))
    case .string:
      return .string(PostgresText.string(bytes))
    case .document:
      return .document(PostgresText.data(bytes))
    case .bytes:
      return .bytes(Data(bytes.readableBytesView))
    case .bool:
      guard let byte = bytes.readInteger(as: UInt8.self) else { throw malformed(kind) }
      return .bool(byte != 0)
    case .uuid:
      guard let uuid = bytes.readUUIDBytes() else { throw malformed(kind) }
      return .uuid(uuid)
    case .date:
      guard let micros = bytes.readInteger(as: Int64.self) else { throw malformed(kind) }
      let (shifted, overflow) = micros.addingReportingOverflow(epochOffset)
      return .date(Value.date(microsecondsSince1970: overflow ? Int64.max : shifted))
    }
  }

  static func malformed(_ kind: FieldKind) -> CofferError {
    CofferError(
      .corruptStore,
      "A \(kind) column held a value of the wrong size; the table was changed by something other than Coffer."
    )
  }
}

/// A bound parameter: one Coffer value, sent in binary with its column's type.
struct PostgresParameter: PostgresDynamicTypeEncodable {
  let value: Value
  let kind: FieldKind

  var psqlType: PostgresDataType { PostgresValues.dataType(kind) }
  var psqlFormat: PostgresFormat { .binary }

  func encode<JSONEncoder: PostgresJSONEncoder>(
    into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
  ) {
    PostgresValues.write(value, into: &byteBuffer)
  }
}

/// A bound one-dimensional array of values of one kind (nulls allowed), for `unnest`, `= ANY`.
struct PostgresArrayParameter: PostgresDynamicTypeEncodable {
  let values: [Value]
  let kind: FieldKind

  var psqlType: PostgresDataType { PostgresValues.arrayType(kind) }
  var psqlFormat: PostgresFormat { .binary }

  func encode<JSONEncoder: PostgresJSONEncoder>(
    into byteBuffer: inout ByteBuffer, context: PostgresEncodingContext<JSONEncoder>
  ) {
    byteBuffer.writeInteger(1, as: Int32.self)  // dimensions
    byteBuffer.writeInteger(values.contains(where: \.isNull) ? 1 : 0, as: Int32.self)
    byteBuffer.writeInteger(PostgresValues.dataType(kind).rawValue)
    byteBuffer.writeInteger(Int32(values.count))
    byteBuffer.writeInteger(1, as: Int32.self)  // lower bound
    for value in values {
      if value.isNull {
        byteBuffer.writeInteger(-1, as: Int32.self)
        continue
      }
      let lengthAt = byteBuffer.writerIndex
      byteBuffer.writeInteger(0, as: Int32.self)
      PostgresValues.write(value, into: &byteBuffer)
      byteBuffer.setInteger(Int32(byteBuffer.writerIndex - lengthAt - 4), at: lengthAt)
    }
  }
}

extension PostgresBindings {
  /// Appends a value as a parameter of a field of `kind`.
  package mutating func append(_ value: Value, as kind: FieldKind) {
    if value.isNull {
      appendNull()
    } else {
      append(PostgresParameter(value: value, kind: kind))
    }
  }
}

extension ByteBuffer {
  fileprivate mutating func readUUIDBytes() -> UUID? {
    guard readableBytes == 16 else { return nil }
    return readWithUnsafeReadableBytes { raw in
      var uuid: uuid_t = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
      withUnsafeMutableBytes(of: &uuid) { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: raw[0..<16])) }
      return (16, UUID(uuid: uuid))
    }
  }
}
