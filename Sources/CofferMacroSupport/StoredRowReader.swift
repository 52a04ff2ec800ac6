@_spi(Backend) import Coffer
import Foundation

/// What the readers in `@Storable`'s generated initializers share: reading the stored value at a
/// position and converting it to a property's type, which the compiler picks from the property
/// assigned to. ``StoredRowReader`` reads a ``Row``; ``StoredFieldsReader`` reads a backend's
/// row in place. Both are for generated code.
///
/// Every failure is a ``CofferError/Code/decodingFailed`` (or
/// ``CofferError/Code/valueOutOfRange``) naming the entity, the id and the field.
public protocol StoredValueReading {
  /// The entity whose row is read, for errors.
  var entity: String { get }
  /// The id of the row, for errors.
  var idText: String? { get }
  /// The stored value at a position, or a missing-field error.
  func stored(_ position: Int, _ name: String) throws -> Value
  /// A scalar at a position read without making a ``Value``, or `nil` to read it as one.
  func inPlace<V: StoredScalar>(_ position: Int, as type: V.Type) -> V?
}

/// Reads a ``Row`` for the `init(storedRow:)` that `@Storable` generates, value by value.
public struct StoredRowReader: StoredValueReading {
  /// The row being read.
  public let row: Row
  /// The entity whose row is read.
  public let entity: String
  @usableFromInline let idPosition: Int

  /// A reader of a row of an entity whose id is at `idPosition`.
  @inlinable
  public init(_ row: Row, entity: String, idPosition: Int) {
    self.row = row
    self.entity = entity
    self.idPosition = idPosition
  }

  /// The value at a position, or a missing-field error.
  @inlinable
  public func stored(_ position: Int, _ name: String) throws -> Value {
    guard position < row.values.count else { throw missing(name) }
    return row.values[position]
  }

  /// `nil`: a row's values are read as they are.
  @inlinable
  public func inPlace<V: StoredScalar>(_ position: Int, as type: V.Type) -> V? { nil }

  /// The id's description.
  public var idText: String? { idPosition < row.values.count ? row.values[idPosition].description : nil }
}

/// Reads a backend's row in place (``StoredFields``) for the `init(storedFields:)` that
/// `@Storable` generates: each scalar through the fields' typed accessor first, as a ``Value``
/// only when that declines.
public struct StoredFieldsReader: StoredValueReading {
  /// The row being read.
  public let fields: any StoredFields
  /// The entity whose row is read.
  public let entity: String
  @usableFromInline let idPosition: Int

  /// A reader of the fields of an entity whose id is at `idPosition`.
  @inlinable
  public init(_ fields: any StoredFields, entity: String, idPosition: Int) {
    self.fields = fields
    self.entity = entity
    self.idPosition = idPosition
  }

  /// The value at a position, or a missing-field error.
  @inlinable
  public func stored(_ position: Int, _ name: String) throws -> Value {
    guard position < fields.count else { throw missing(name) }
    return try fields.value(at: position)
  }

  /// The fields' typed accessor for `V`.
  @inlinable
  public func inPlace<V: StoredScalar>(_ position: Int, as type: V.Type) -> V? {
    V.read(from: fields, at: position)
  }

  /// The id's description.
  public var idText: String? {
    guard idPosition < fields.count, let id = try? fields.value(at: idPosition) else { return nil }
    return id.description
  }
}

extension StoredValueReading {
  /// A scalar property.
  @inlinable
  public func read<V: StoredScalar>(_ position: Int, _ name: String) throws -> V {
    if let result = inPlace(position, as: V.self) { return result }
    let value = try stored(position, name)
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// An optional scalar property.
  @inlinable
  public func read<V: StoredScalar>(_ position: Int, _ name: String) throws -> V? {
    if let result = inPlace(position, as: V.self) { return result }
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
    return try decodeDocumentOrScalar(value, as: V.self, name)
  }

  @usableFromInline
  func decodeDocumentOrScalar<V: Decodable>(_ value: Value, as type: V.Type, _ name: String) throws -> V {
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
