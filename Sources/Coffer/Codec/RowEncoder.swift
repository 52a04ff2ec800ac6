import Foundation

/// Encodes a `Storable` value into a ``Row`` positioned by its schema: each field's value goes
/// straight into its slot, found by following declaration order, with no per-row dictionary.
struct RowEncoder {
  let schema: EntitySchema

  func encode<T: Encodable>(_ value: T) throws -> Row {
    let sink = RowSink(schema: schema)
    try value.encode(to: RowEncoderImpl(sink: sink))
    return Row(sink.values)
  }
}

/// The slots being filled, and a cursor that makes the usual in-order lookup a single compare.
final class RowSink {
  let schema: EntitySchema
  var values: [Value]
  var cursor = 0

  init(schema: EntitySchema) {
    self.schema = schema
    self.values = Array(repeating: .null, count: schema.fields.count)
  }

  @inline(__always)
  func position(of key: String) throws -> Int {
    let fields = schema.fields
    if cursor < fields.count, fields[cursor].name == key {
      defer { cursor += 1 }
      return cursor
    }
    guard let position = schema.position(of: key) else {
      throw CofferError(
        .invalidSchema,
        "\(schema.name) encodes a field '\(key)' that its schema does not have. Encode and decode the same keys.",
        entity: schema.name, field: key)
    }
    cursor = position + 1
    return position
  }

  func set(_ value: Value, at key: String) throws {
    let position = try position(of: key)
    values[position] = value
  }

  func outOfRange(_ key: String) -> CofferError {
    CofferError(
      .valueOutOfRange,
      "\(schema.name).\(key) does not fit in a signed 64-bit integer, the largest integer Coffer stores.",
      entity: schema.name, field: key)
  }
}

struct RowEncoderImpl: Encoder {
  let sink: RowSink
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(RowKeyedEncoder<Key>(sink: sink))
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { FailingEncoding(entity: sink.schema.name) }
  func singleValueContainer() -> any SingleValueEncodingContainer {
    FailingEncoding(entity: sink.schema.name)
  }
}

struct RowKeyedEncoder<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let sink: RowSink
  var codingPath: [any CodingKey] { [] }

  mutating func encodeNil(forKey key: Key) throws { try sink.set(.null, at: key.stringValue) }
  mutating func encode(_ value: Bool, forKey key: Key) throws {
    try sink.set(.bool(value), at: key.stringValue)
  }
  mutating func encode(_ value: String, forKey key: Key) throws {
    try sink.set(.string(value), at: key.stringValue)
  }
  mutating func encode(_ value: Double, forKey key: Key) throws {
    try sink.set(.double(value), at: key.stringValue)
  }
  mutating func encode(_ value: Float, forKey key: Key) throws {
    try sink.set(.double(Double(value)), at: key.stringValue)
  }
  mutating func encode(_ value: Int, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: Int8, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: Int16, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: Int32, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: Int64, forKey key: Key) throws {
    try sink.set(.int(value), at: key.stringValue)
  }
  mutating func encode(_ value: UInt8, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: UInt16, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: UInt32, forKey key: Key) throws {
    try sink.set(.int(Int64(value)), at: key.stringValue)
  }
  mutating func encode(_ value: UInt, forKey key: Key) throws {
    guard let exact = Int64(exactly: value) else { throw sink.outOfRange(key.stringValue) }
    try sink.set(.int(exact), at: key.stringValue)
  }
  mutating func encode(_ value: UInt64, forKey key: Key) throws {
    guard let exact = Int64(exactly: value) else { throw sink.outOfRange(key.stringValue) }
    try sink.set(.int(exact), at: key.stringValue)
  }

  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    try sink.set(try ValueEncoding.value(of: value, field: key.stringValue, sink: sink), at: key.stringValue)
  }

  mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws {
    guard let value else { return try encodeNil(forKey: key) }
    try encode(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws {
    guard let value else { return try encodeNil(forKey: key) }
    try encode(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws {
    guard let value else { return try encodeNil(forKey: key) }
    try encode(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws {
    guard let value else { return try encodeNil(forKey: key) }
    try encode(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws {
    guard let value else { return try encodeNil(forKey: key) }
    try encode(value, forKey: key)
  }
  mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws {
    guard let value else { return try encodeNil(forKey: key) }
    try encode(value, forKey: key)
  }

  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    KeyedEncodingContainer(FailingKeyedEncoding<NestedKey>(entity: sink.schema.name))
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
    FailingEncoding(entity: sink.schema.name)
  }
  mutating func superEncoder() -> any Encoder { RowEncoderImpl(sink: sink) }
  mutating func superEncoder(forKey key: Key) -> any Encoder { RowEncoderImpl(sink: sink) }
}

/// Turns a non-primitive `Encodable` field value into a ``Value`` according to its field kind:
/// well-known types directly, documents as canonical JSON, and anything else through the single
/// scalar it encodes itself as (enums with raw values, single-value wrappers).
enum ValueEncoding {
  static func value<T: Encodable>(of value: T, field: String, sink: RowSink) throws -> Value {
    switch value {
    case let date as Date: return .date(Value.normalized(date))
    case let uuid as UUID: return .uuid(uuid)
    case let data as Data: return .bytes(data)
    case let url as URL: return .string(url.absoluteString)
    default: break
    }
    guard let position = sink.schema.position(of: field) else { return .null }
    if sink.schema.fields[position].kind == .document {
      do {
        return .document(try DocumentCoding.encode(value))
      } catch {
        throw CofferError(
          .invalidValue, "\(sink.schema.name).\(field) could not be encoded as a document: \(error)",
          entity: sink.schema.name, field: field, underlying: error)
      }
    }
    let capture = ScalarCapture(sink: sink, field: field)
    try value.encode(to: capture)
    guard let captured = capture.box.value else {
      throw CofferError(
        .invalidValue, "\(sink.schema.name).\(field) encoded no value; it must encode one scalar value.",
        entity: sink.schema.name, field: field)
    }
    return captured
  }
}
