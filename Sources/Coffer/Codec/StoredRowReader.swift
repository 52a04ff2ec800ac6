import Foundation

/// Reads the fields of a row for the initializers that `@Storable` generates, converting each
/// value to its property's type, which the compiler picks from the property assigned to.
///
/// The row is any ``StoredFields``: a ``Row``, or a backend's row read in place. Each read
/// tries the field's typed accessor first and reads a ``Value`` only when that declines.
///
/// Every failure is a ``CofferError/Code/decodingFailed`` (or
/// ``CofferError/Code/valueOutOfRange``) naming the entity, the id and the field.
public struct StoredRowReader {
  /// The row being read.
  public let fields: any StoredFields
  @usableFromInline let entity: String
  @usableFromInline let idPosition: Int

  /// A reader of a row of an entity whose id is at `idPosition`.
  @inlinable
  public init(_ fields: any StoredFields, entity: String, idPosition: Int) {
    self.fields = fields
    self.entity = entity
    self.idPosition = idPosition
  }

  /// The stored value at a position, or a missing-field error.
  @inlinable
  func stored(_ position: Int, _ name: String) throws -> Value {
    guard position < fields.count else { throw missing(name) }
    return try fields.value(at: position)
  }

  /// A scalar property.
  @inlinable
  public func read<V: StoredScalar>(_ position: Int, _ name: String) throws -> V {
    if let result = V.read(from: fields, at: position) { return result }
    let value = try stored(position, name)
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// An optional scalar property.
  @inlinable
  public func read<V: StoredScalar>(_ position: Int, _ name: String) throws -> V? {
    if let result = V.read(from: fields, at: position) { return result }
    let value = try stored(position, name)
    if case .null = value { return nil }
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// An enum stored as its raw value.
  @inlinable
  public func read<V: RawRepresentable & Decodable>(_ position: Int, _ name: String) throws -> V
  where V.RawValue: StoredScalar {
    let value = try stored(position, name)
    guard let raw = V.RawValue(storedScalar: value), let result = V(rawValue: raw) else {
      throw mismatch(value, V.self, name)
    }
    return result
  }

  /// An optional enum stored as its raw value.
  @inlinable
  public func read<V: RawRepresentable & Decodable>(_ position: Int, _ name: String) throws -> V?
  where V.RawValue: StoredScalar {
    let value = try stored(position, name)
    if case .null = value { return nil }
    guard let raw = V.RawValue(storedScalar: value), let result = V(rawValue: raw) else {
      throw mismatch(value, V.self, name)
    }
    return result
  }

  /// Any other `Codable` property, optional or not.
  @_disfavoredOverload
  public func read<V: Decodable>(_ position: Int, _ name: String) throws -> V {
    let value = try stored(position, name)
    if case .null = value, let optional = V.self as? any NullableField.Type, let none = optional.none as? V {
      return none
    }
    return try decode(value, as: V.self, name)
  }

  private func decode<V: Decodable>(_ value: Value, as type: V.Type, _ name: String) throws -> V {
    if case .document(let data) = value {
      do {
        return try DocumentCoding.decode(type, from: data)
      } catch {
        throw CofferError(
          .decodingFailed, "The stored document \(entity).\(name) does not decode as \(V.self): \(error)",
          entity: entity, id: idText, field: name, underlying: error)
      }
    }
    if let scalar = type as? any StoredScalar.Type {
      guard let result = scalar.init(storedScalar: value) as? V else { throw mismatch(value, V.self, name) }
      return result
    }
    do {
      return try V(from: StoredScalarDecoder(value: value))
    } catch {
      throw mismatch(value, V.self, name)
    }
  }

  @usableFromInline
  var idText: String? {
    guard idPosition < fields.count, let id = try? fields.value(at: idPosition) else { return nil }
    return id.description
  }

  @usableFromInline
  func missing(_ name: String) -> CofferError {
    CofferError(
      .decodingFailed, "\(entity) has no stored field '\(name)'. Add it to the schema or make it optional.",
      entity: entity, id: idText, field: name)
  }

  @usableFromInline
  func mismatch(_ value: Value, _ type: Any.Type, _ name: String) -> CofferError {
    if case .int(let number) = value, type is any FixedWidthInteger.Type {
      return CofferError(
        .valueOutOfRange, "The stored \(entity).\(name) = \(number) does not fit in \(type).",
        entity: entity, id: idText, field: name)
    }
    return CofferError(
      .decodingFailed,
      "\(entity).\(name) is stored as \(value.kind?.description ?? "null") but read as \(type).",
      entity: entity, id: idText, field: name)
  }
}

/// Optionals, which read `nil` from a null field.
protocol NullableField { static var none: Self { get } }
extension Optional: NullableField {}

/// A decoder over one stored scalar, for types that decode themselves from a single value.
struct StoredScalarDecoder: Decoder, SingleValueDecodingContainer {
  let value: Value
  var codingPath: [any CodingKey] { [] }
  var userInfo: [CodingUserInfoKey: Any] { [:] }

  private struct Mismatch: Error {}

  func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
    throw Mismatch()
  }
  func unkeyedContainer() throws -> any UnkeyedDecodingContainer { throw Mismatch() }
  func singleValueContainer() throws -> any SingleValueDecodingContainer { self }

  func decodeNil() -> Bool { value.isNull }
  func decode(_ type: Bool.Type) throws -> Bool { try scalar(type) }
  func decode(_ type: String.Type) throws -> String { try scalar(type) }
  func decode(_ type: Double.Type) throws -> Double { try scalar(type) }
  func decode(_ type: Float.Type) throws -> Float { try scalar(type) }
  func decode(_ type: Int.Type) throws -> Int { try scalar(type) }
  func decode(_ type: Int8.Type) throws -> Int8 { try scalar(type) }
  func decode(_ type: Int16.Type) throws -> Int16 { try scalar(type) }
  func decode(_ type: Int32.Type) throws -> Int32 { try scalar(type) }
  func decode(_ type: Int64.Type) throws -> Int64 { try scalar(type) }
  func decode(_ type: UInt.Type) throws -> UInt { try scalar(type) }
  func decode(_ type: UInt8.Type) throws -> UInt8 { try scalar(type) }
  func decode(_ type: UInt16.Type) throws -> UInt16 { try scalar(type) }
  func decode(_ type: UInt32.Type) throws -> UInt32 { try scalar(type) }
  func decode(_ type: UInt64.Type) throws -> UInt64 { try scalar(type) }
  func decode<T: Decodable>(_ type: T.Type) throws -> T {
    if let scalar = type as? any StoredScalar.Type {
      guard let result = scalar.init(storedScalar: value) as? T else { throw Mismatch() }
      return result
    }
    return try T(from: self)
  }

  private func scalar<T: StoredScalar>(_ type: T.Type) throws -> T {
    guard let result = T(storedScalar: value) else { throw Mismatch() }
    return result
  }
}
