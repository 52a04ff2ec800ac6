import Foundation

/// Decodes a `Storable` value from a ``Row`` positioned by its schema.
struct RowDecoder {
  let schema: EntitySchema

  func decode<T: Decodable>(_ type: T.Type, from row: Row) throws -> T {
    let source = RowCursor(schema: schema, row: row)
    do {
      return try T(from: RowDecoderImpl(source: source))
    } catch let error as CofferError {
      throw error
    } catch {
      let id = row.values.indices.contains(schema.idPosition) ? row[schema.idPosition].description : nil
      throw CofferError(
        .decodingFailed,
        "A stored \(schema.name) could not be decoded as \(T.self): \(error). Check that the type matches the stored schema.",
        entity: schema.name, id: id, underlying: error)
    }
  }
}

/// The row being read and a cursor that makes the usual in-order lookup a single compare.
final class RowCursor {
  let schema: EntitySchema
  let row: Row
  var cursor = 0

  init(schema: EntitySchema, row: Row) {
    self.schema = schema
    self.row = row
  }

  @inline(__always)
  func position(of key: String) -> Int? {
    let fields = schema.fields
    if cursor < fields.count, fields[cursor].name == key {
      defer { cursor += 1 }
      return cursor
    }
    guard let position = schema.position(of: key) else { return nil }
    cursor = position + 1
    return position
  }

  func value(for key: String) throws -> Value {
    guard let position = position(of: key), position < row.count else {
      throw CofferError(
        .decodingFailed,
        "\(schema.name) has no stored field '\(key)'. Add it to the schema or make it optional.",
        entity: schema.name, id: idText, field: key)
    }
    return row[position]
  }

  var idText: String? { schema.idPosition < row.count ? row[schema.idPosition].description : nil }

  func mismatch(_ key: String, expected: String, found: Value) -> CofferError {
    CofferError(
      .decodingFailed,
      "\(schema.name).\(key) is stored as \(found.kind?.description ?? "null") but read as \(expected).",
      entity: schema.name, id: idText, field: key)
  }

  func outOfRange(_ key: String, _ value: Int64, _ type: Any.Type) -> CofferError {
    CofferError(
      .valueOutOfRange, "The stored \(schema.name).\(key) value does not fit in \(type).",
      entity: schema.name, id: idText, field: key)
  }
}

struct RowDecoderImpl: Decoder {
  let source: RowCursor
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    KeyedDecodingContainer(RowKeyedDecoder<Key>(source: source))
  }
  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    throw CofferError(
      .decodingFailed, "A Storable type must decode from a keyed container.", entity: source.schema.name)
  }
  func singleValueContainer() throws -> any SingleValueDecodingContainer {
    throw CofferError(
      .decodingFailed, "A Storable type must decode from a keyed container.", entity: source.schema.name)
  }
}

struct RowKeyedDecoder<Key: CodingKey>: KeyedDecodingContainerProtocol {
  let source: RowCursor
  var codingPath: [any CodingKey] { [] }
  var allKeys: [Key] { source.schema.fields.compactMap { Key(stringValue: $0.name) } }

  func contains(_ key: Key) -> Bool { source.schema.position(of: key.stringValue) != nil }

  func decodeNil(forKey key: Key) throws -> Bool {
    guard let position = source.schema.position(of: key.stringValue), position < source.row.count else {
      return true
    }
    return source.row[position].isNull
  }

  func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
    let value = try source.value(for: key.stringValue)
    guard case .bool(let v) = value else {
      throw source.mismatch(key.stringValue, expected: "Bool", found: value)
    }
    return v
  }
  func decode(_ type: String.Type, forKey key: Key) throws -> String {
    let value = try source.value(for: key.stringValue)
    guard case .string(let v) = value else {
      throw source.mismatch(key.stringValue, expected: "String", found: value)
    }
    return v
  }
  func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
    let value = try source.value(for: key.stringValue)
    guard case .double(let v) = value else {
      throw source.mismatch(key.stringValue, expected: "Double", found: value)
    }
    return v
  }
  func decode(_ type: Float.Type, forKey key: Key) throws -> Float {
    Float(try decode(Double.self, forKey: key))
  }
  func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 {
    let value = try source.value(for: key.stringValue)
    guard case .int(let v) = value else {
      throw source.mismatch(key.stringValue, expected: "an integer", found: value)
    }
    return v
  }
  func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(key) }
  func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(key) }
  func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(key) }
  func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(key) }
  func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(key) }
  func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(key) }
  func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(key) }
  func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(key) }
  func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(key) }

  private func integer<I: FixedWidthInteger>(_ key: Key) throws -> I {
    let stored = try decode(Int64.self, forKey: key)
    guard let exact = I(exactly: stored) else { throw source.outOfRange(key.stringValue, stored, I.self) }
    return exact
  }

  func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
    let value = try source.value(for: key.stringValue)
    return try ValueDecoding.decode(type, from: value, field: key.stringValue, source: source)
  }

  func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
    guard let position = source.position(of: key.stringValue), position < source.row.count else { return nil }
    let value = source.row[position]
    if value.isNull { return nil }
    return try ValueDecoding.decode(type, from: value, field: key.stringValue, source: source)
  }

  func nestedContainer<NestedKey: CodingKey>(
    keyedBy type: NestedKey.Type, forKey key: Key
  ) throws -> KeyedDecodingContainer<NestedKey> {
    throw CofferError(
      .decodingFailed, "Nested containers are not stored; decode \(key.stringValue) as a Codable value.",
      entity: source.schema.name, field: key.stringValue)
  }
  func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
    throw CofferError(
      .decodingFailed, "Nested containers are not stored; decode \(key.stringValue) as a Codable value.",
      entity: source.schema.name, field: key.stringValue)
  }
  func superDecoder() throws -> any Decoder { RowDecoderImpl(source: source) }
  func superDecoder(forKey key: Key) throws -> any Decoder { RowDecoderImpl(source: source) }
}

/// Turns a stored ``Value`` back into a field's Swift type: the scalar types directly,
/// documents from canonical JSON, anything else through a single-value decoder.
enum ValueDecoding {
  static func decode<T: Decodable>(_ type: T.Type, from value: Value, field: String, source: RowCursor) throws
    -> T
  {
    switch value {
    case .date(let date):
      if let result = date as? T { return result }
    case .uuid(let uuid):
      if let result = uuid as? T { return result }
    case .bytes(let data):
      if let result = data as? T { return result }
    case .string(let text) where type == URL.self:
      if let url = URL(string: text), let result = url as? T { return result }
      throw source.mismatch(field, expected: "a URL", found: value)
    case .document(let data):
      do {
        return try DocumentCoding.decode(type, from: data)
      } catch {
        throw CofferError(
          .decodingFailed,
          "The stored document \(source.schema.name).\(field) does not decode as \(T.self): \(error)",
          entity: source.schema.name, id: source.idText, field: field, underlying: error)
      }
    default:
      break
    }
    if let direct = Self.direct(value, as: type) { return direct }
    return try T(from: ScalarDecoder(value: value, field: field, source: source))
  }

  private static func direct<T>(_ value: Value, as type: T.Type) -> T? {
    switch value {
    case .string(let v): v as? T
    case .bool(let v): v as? T
    case .int(let v): v as? T
    case .double(let v): v as? T
    default: nil
    }
  }
}
