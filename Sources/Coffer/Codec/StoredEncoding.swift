import Foundation

/// Stores a `Codable` field value that is neither a ``StoredScalar`` nor a raw-value enum, the
/// way the `Codable` row codec does: as the one scalar the value encodes itself as, or, when it
/// encodes a keyed or unkeyed container, as a document of canonical JSON.
@_spi(Backend) public enum StoredEncoding {
  /// The error for a scalar that does not fit what Coffer stores: an unsigned integer above
  /// `Int64.max`.
  public static func outOfRange(_ field: String, _ entity: String) -> CofferError {
    CofferError(
      .valueOutOfRange,
      "\(entity).\(field) does not fit in a signed 64-bit integer, the largest integer Coffer stores.",
      entity: entity, field: field)
  }

  /// The stored value of a field's `Encodable` value: the one scalar it encodes itself as, or a
  /// document of canonical JSON.
  public static func value<V: Encodable>(of value: V, field: String, entity: String) throws -> Value {
    if let scalar = value as? any StoredScalar {
      guard let stored = scalar.storedScalar else {
        throw outOfRange(field, entity)
      }
      return stored
    }
    let capture = SingleScalarCapture()
    try? value.encode(to: capture)
    if capture.overflows {
      throw CofferError(
        .valueOutOfRange,
        "\(entity).\(field) does not fit in a signed 64-bit integer, the largest integer Coffer stores.",
        entity: entity, field: field)
    }
    if !capture.needsDocument, let captured = capture.value { return captured }
    do {
      return .document(try DocumentCoding.encode(value))
    } catch {
      throw CofferError(
        .invalidValue, "\(entity).\(field) could not be encoded as a document: \(error)",
        entity: entity, field: field, underlying: error)
    }
  }
}

/// Records the one scalar a value encodes through a single-value container, or that it needs a
/// document (it asked for a keyed or unkeyed container, or encoded a non-scalar).
final class SingleScalarCapture: Encoder, SingleValueEncodingContainer {
  var value: Value?
  var needsDocument = false
  var overflows = false
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  private struct Stop: Error {}

  func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
    needsDocument = true
    return KeyedEncodingContainer(FailingKeyedEncoding<Key>(entity: ""))
  }
  func unkeyedContainer() -> any UnkeyedEncodingContainer {
    needsDocument = true
    return FailingEncoding(entity: "")
  }
  func singleValueContainer() -> any SingleValueEncodingContainer { self }

  func encodeNil() throws { value = .null }
  func encode(_ value: Bool) throws { try put(value) }
  func encode(_ value: String) throws { try put(value) }
  func encode(_ value: Double) throws { try put(value) }
  func encode(_ value: Float) throws { try put(value) }
  func encode(_ value: Int) throws { try put(value) }
  func encode(_ value: Int8) throws { try put(value) }
  func encode(_ value: Int16) throws { try put(value) }
  func encode(_ value: Int32) throws { try put(value) }
  func encode(_ value: Int64) throws { try put(value) }
  func encode(_ value: UInt) throws { try put(value) }
  func encode(_ value: UInt8) throws { try put(value) }
  func encode(_ value: UInt16) throws { try put(value) }
  func encode(_ value: UInt32) throws { try put(value) }
  func encode(_ value: UInt64) throws { try put(value) }
  func encode<T: Encodable>(_ value: T) throws { try put(value) }

  private func put<T: Encodable>(_ value: T) throws {
    guard let scalar = value as? any StoredScalar else {
      needsDocument = true
      throw Stop()
    }
    guard let stored = scalar.storedScalar else {
      overflows = true
      throw Stop()
    }
    self.value = stored
  }
}
