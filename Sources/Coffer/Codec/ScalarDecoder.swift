import Foundation

/// A decoder over one stored scalar, for types that decode themselves from a single value
/// (enums with raw values, single-value wrappers).
struct ScalarDecoder: Decoder, SingleValueDecodingContainer {
  let value: Value
  let field: String
  let source: RowCursor
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    throw source.mismatch(field, expected: "a keyed value", found: value)
  }
  func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
    throw source.mismatch(field, expected: "a list", found: value)
  }
  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  func decodeNil() -> Bool { value.isNull }
  func decode(_ type: Bool.Type) throws -> Bool {
    guard case .bool(let v) = value else { throw source.mismatch(field, expected: "Bool", found: value) }
    return v
  }
  func decode(_ type: String.Type) throws -> String {
    guard case .string(let v) = value else { throw source.mismatch(field, expected: "String", found: value) }
    return v
  }
  func decode(_ type: Double.Type) throws -> Double {
    guard case .double(let v) = value else { throw source.mismatch(field, expected: "Double", found: value) }
    return v
  }
  func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
  func decode(_ type: Int.Type) throws -> Int { try integer() }
  func decode(_ type: Int8.Type) throws -> Int8 { try integer() }
  func decode(_ type: Int16.Type) throws -> Int16 { try integer() }
  func decode(_ type: Int32.Type) throws -> Int32 { try integer() }
  func decode(_ type: Int64.Type) throws -> Int64 { try integer() }
  func decode(_ type: UInt.Type) throws -> UInt { try integer() }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try integer() }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try integer() }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try integer() }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try integer() }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    try ValueDecoding.decode(type, from: value, field: field, source: source)
  }

  private func integer<I: FixedWidthInteger>() throws -> I {
    guard case .int(let v) = value else { throw source.mismatch(field, expected: "an integer", found: value) }
    guard let exact = I(exactly: v) else { throw source.outOfRange(field, v, I.self) }
    return exact
  }
}
