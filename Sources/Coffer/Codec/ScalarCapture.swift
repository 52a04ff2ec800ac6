import Foundation

/// An encoder that captures the one scalar a value encodes itself as: the raw value of an enum,
/// the wrapped value of a single-value wrapper.
struct ScalarCapture: Encoder {
  final class Box { var value: Value? }
  let sink: RowSink
  let field: String
  let box = Box()
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(FailingKeyedEncoding<Key>(entity: sink.schema.name))
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { FailingEncoding(entity: sink.schema.name) }
  func singleValueContainer() -> any SingleValueEncodingContainer { ScalarCaptureContainer(capture: self) }
}

struct ScalarCaptureContainer: SingleValueEncodingContainer {
  let capture: ScalarCapture
  var codingPath: [any CodingKey] { [] }

  private func put(_ value: Value) { capture.box.value = value }

  mutating func encodeNil() throws { put(.null) }
  mutating func encode(_ value: Bool) throws { put(.bool(value)) }
  mutating func encode(_ value: String) throws { put(.string(value)) }
  mutating func encode(_ value: Double) throws { put(.double(value)) }
  mutating func encode(_ value: Float) throws { put(.double(Double(value))) }
  mutating func encode(_ value: Int) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: Int8) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: Int16) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: Int32) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: Int64) throws { put(.int(value)) }
  mutating func encode(_ value: UInt8) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: UInt16) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: UInt32) throws { put(.int(Int64(value))) }
  mutating func encode(_ value: UInt) throws {
    guard let exact = Int64(exactly: value) else {
      throw capture.sink.outOfRange(capture.field)
    }
    put(.int(exact))
  }
  mutating func encode(_ value: UInt64) throws {
    guard let exact = Int64(exactly: value) else {
      throw capture.sink.outOfRange(capture.field)
    }
    put(.int(exact))
  }
  mutating func encode<T: Encodable>(_ value: T) throws {
    put(try ValueEncoding.value(of: value, field: capture.field, sink: capture.sink))
  }
}

/// Containers handed out where the row codec cannot follow; using one fails with a message
/// that says how to store such a value.
struct FailingEncoding: UnkeyedEncodingContainer, SingleValueEncodingContainer {
  let entity: String
  var codingPath: [any CodingKey] { [] }
  var count: Int { 0 }

  private func fail() -> CofferError {
    CofferError(
      .invalidSchema,
      "A value of \(entity) encodes itself in a shape Coffer cannot map to fields. A Storable type encodes one "
        + "keyed container; nested values are stored as documents when they are Codable types of their own.",
      entity: entity)
  }
  mutating func encodeNil() throws { throw fail() }
  mutating func encode<T: Encodable>(_ value: T) throws { throw fail() }
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type
  ) -> KeyedEncodingContainer<NestedKey> {
    KeyedEncodingContainer(FailingKeyedEncoding<NestedKey>(entity: entity))
  }
  mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
  mutating func superEncoder() -> any Encoder { FailingEncoder(entity: entity) }
}

struct FailingKeyedEncoding<Key: CodingKey>: KeyedEncodingContainerProtocol {
  let entity: String
  var codingPath: [any CodingKey] { [] }
  private var inner: FailingEncoding { FailingEncoding(entity: entity) }

  mutating func encodeNil(forKey key: Key) throws {
    var inner = inner
    try inner.encodeNil()
  }
  mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
    var inner = inner
    try inner.encode(value)
  }
  mutating func nestedContainer<NestedKey: CodingKey>(
    keyedBy keyType: NestedKey.Type, forKey key: Key
  ) -> KeyedEncodingContainer<NestedKey> {
    KeyedEncodingContainer(FailingKeyedEncoding<NestedKey>(entity: entity))
  }
  mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer { inner }
  mutating func superEncoder() -> any Encoder { FailingEncoder(entity: entity) }
  mutating func superEncoder(forKey key: Key) -> any Encoder { FailingEncoder(entity: entity) }
}

struct FailingEncoder: Encoder {
  let entity: String
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }
  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    KeyedEncodingContainer(FailingKeyedEncoding<Key>(entity: entity))
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer { FailingEncoding(entity: entity) }
  func singleValueContainer() -> any SingleValueEncodingContainer { FailingEncoding(entity: entity) }
}
