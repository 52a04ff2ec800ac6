@_spi(Backend) import Coffer
import Foundation

/// Reads a ``Coffer/StoredRow`` for the `init(storedRow:)` that `@Storable` generates, value by
/// value: each scalar through the backend's typed accessor when the row is read in place, as a
/// ``Coffer/Value`` otherwise. You do not call it yourself.
///
/// The compiler picks the `read` that matches the property assigned to. Every failure is a
/// ``Coffer/CofferError/Code/decodingFailed`` (or ``Coffer/CofferError/Code/valueOutOfRange``)
/// naming the entity, the id and the field.
public struct StoredRowReader {
  let row: Row?
  let fields: (any StoredFields)?
  let entity: String
  let idPosition: Int

  /// A reader of a stored row of an entity whose id is at `idPosition`.
  public init(_ row: StoredRow, entity: String, idPosition: Int) {
    self.row = row.row
    self.fields = row.fields
    self.entity = entity
    self.idPosition = idPosition
  }

  // MARK: Scalars, one pair (plain and optional) per stored scalar type

  /// A `Bool` property.
  public func read(_ position: Int, _ name: String) throws -> Bool { try scalar(position, name) }
  /// An optional `Bool` property.
  public func read(_ position: Int, _ name: String) throws -> Bool? { try optionalScalar(position, name) }
  /// A `String` property.
  public func read(_ position: Int, _ name: String) throws -> String { try scalar(position, name) }
  /// An optional `String` property.
  public func read(_ position: Int, _ name: String) throws -> String? { try optionalScalar(position, name) }
  /// A `Double` property.
  public func read(_ position: Int, _ name: String) throws -> Double { try scalar(position, name) }
  /// An optional `Double` property.
  public func read(_ position: Int, _ name: String) throws -> Double? { try optionalScalar(position, name) }
  /// A `Float` property.
  public func read(_ position: Int, _ name: String) throws -> Float { try scalar(position, name) }
  /// An optional `Float` property.
  public func read(_ position: Int, _ name: String) throws -> Float? { try optionalScalar(position, name) }
  /// A `Date` property.
  public func read(_ position: Int, _ name: String) throws -> Date { try scalar(position, name) }
  /// An optional `Date` property.
  public func read(_ position: Int, _ name: String) throws -> Date? { try optionalScalar(position, name) }
  /// A `UUID` property.
  public func read(_ position: Int, _ name: String) throws -> UUID { try scalar(position, name) }
  /// An optional `UUID` property.
  public func read(_ position: Int, _ name: String) throws -> UUID? { try optionalScalar(position, name) }
  /// A `Data` property.
  public func read(_ position: Int, _ name: String) throws -> Data { try scalar(position, name) }
  /// An optional `Data` property.
  public func read(_ position: Int, _ name: String) throws -> Data? { try optionalScalar(position, name) }
  /// A `URL` property.
  public func read(_ position: Int, _ name: String) throws -> URL { try scalar(position, name) }
  /// An optional `URL` property.
  public func read(_ position: Int, _ name: String) throws -> URL? { try optionalScalar(position, name) }
  /// An `Int` property.
  public func read(_ position: Int, _ name: String) throws -> Int { try scalar(position, name) }
  /// An optional `Int` property.
  public func read(_ position: Int, _ name: String) throws -> Int? { try optionalScalar(position, name) }
  /// An `Int8` property.
  public func read(_ position: Int, _ name: String) throws -> Int8 { try scalar(position, name) }
  /// An optional `Int8` property.
  public func read(_ position: Int, _ name: String) throws -> Int8? { try optionalScalar(position, name) }
  /// An `Int16` property.
  public func read(_ position: Int, _ name: String) throws -> Int16 { try scalar(position, name) }
  /// An optional `Int16` property.
  public func read(_ position: Int, _ name: String) throws -> Int16? { try optionalScalar(position, name) }
  /// An `Int32` property.
  public func read(_ position: Int, _ name: String) throws -> Int32 { try scalar(position, name) }
  /// An optional `Int32` property.
  public func read(_ position: Int, _ name: String) throws -> Int32? { try optionalScalar(position, name) }
  /// An `Int64` property.
  public func read(_ position: Int, _ name: String) throws -> Int64 { try scalar(position, name) }
  /// An optional `Int64` property.
  public func read(_ position: Int, _ name: String) throws -> Int64? { try optionalScalar(position, name) }
  /// A `UInt` property.
  public func read(_ position: Int, _ name: String) throws -> UInt { try scalar(position, name) }
  /// An optional `UInt` property.
  public func read(_ position: Int, _ name: String) throws -> UInt? { try optionalScalar(position, name) }
  /// A `UInt8` property.
  public func read(_ position: Int, _ name: String) throws -> UInt8 { try scalar(position, name) }
  /// An optional `UInt8` property.
  public func read(_ position: Int, _ name: String) throws -> UInt8? { try optionalScalar(position, name) }
  /// A `UInt16` property.
  public func read(_ position: Int, _ name: String) throws -> UInt16 { try scalar(position, name) }
  /// An optional `UInt16` property.
  public func read(_ position: Int, _ name: String) throws -> UInt16? { try optionalScalar(position, name) }
  /// A `UInt32` property.
  public func read(_ position: Int, _ name: String) throws -> UInt32 { try scalar(position, name) }
  /// An optional `UInt32` property.
  public func read(_ position: Int, _ name: String) throws -> UInt32? { try optionalScalar(position, name) }
  /// A `UInt64` property.
  public func read(_ position: Int, _ name: String) throws -> UInt64 { try scalar(position, name) }
  /// An optional `UInt64` property.
  public func read(_ position: Int, _ name: String) throws -> UInt64? { try optionalScalar(position, name) }

  // MARK: Enums and everything else

  /// An enum stored as its raw value.
  public func read<V: RawRepresentable & Decodable>(_ position: Int, _ name: String) throws -> V
  where V.RawValue: StoredScalar {
    let value = try stored(position, name)
    guard let raw = V.RawValue(storedScalar: value), let result = V(rawValue: raw) else {
      throw mismatch(value, V.self, name)
    }
    return result
  }

  /// An optional enum stored as its raw value.
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

  // MARK: Reading

  /// A scalar, through the backend's typed accessor first.
  private func scalar<V: StoredScalar>(_ position: Int, _ name: String) throws -> V {
    if let fields, let result = V.read(from: fields, at: position) { return result }
    let value = try stored(position, name)
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// An optional scalar, through the backend's typed accessor first.
  private func optionalScalar<V: StoredScalar>(_ position: Int, _ name: String) throws -> V? {
    if let fields, let result = V.read(from: fields, at: position) { return result }
    let value = try stored(position, name)
    if case .null = value { return nil }
    guard let result = V(storedScalar: value) else { throw mismatch(value, V.self, name) }
    return result
  }

  /// The stored value at a position, or a missing-field error.
  private func stored(_ position: Int, _ name: String) throws -> Value {
    if let row {
      guard position < row.values.count else { throw missing(name) }
      return row.values[position]
    }
    guard let fields, position < fields.count else { throw missing(name) }
    return try fields.value(at: position)
  }

  /// The id's description, for errors.
  private var idText: String? {
    if let row { return idPosition < row.values.count ? row.values[idPosition].description : nil }
    guard let fields, idPosition < fields.count, let id = try? fields.value(at: idPosition) else {
      return nil
    }
    return id.description
  }

  private func decodeDocumentOrScalar<V: Decodable>(_ value: Value, as type: V.Type, _ name: String) throws
    -> V
  {
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

  private func missing(_ name: String) -> CofferError {
    CofferError(
      .decodingFailed, "\(entity) has no stored field '\(name)'. Add it to the schema or make it optional.",
      entity: entity, id: idText, field: name)
  }

  private func mismatch(_ value: Value, _ type: Any.Type, _ name: String) -> CofferError {
    if case .int = value, type is any FixedWidthInteger.Type {
      return CofferError(
        .valueOutOfRange, "The stored \(entity).\(name) value does not fit in \(type).",
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
