@_spi(Backend) import Coffer
import Foundation

/// The building blocks of the code `@Storable` generates: a field's schema entry and its value
/// in a row, chosen at compile time by the property's type.
///
/// Scalars (``StoredScalar``) convert directly; enums with a scalar raw value store the raw
/// value; any other `Codable` type is stored the way the `Codable` row codec stores it (as a
/// document, or as the one scalar it encodes itself as). You do not call these yourself.
public enum StoredField {
  // MARK: Schema

  /// The field of a scalar property.
  public static func field<Root, V: StoredScalar>(
    _ name: String, _ keyPath: KeyPath<Root, V>, in entity: String
  )
    throws -> Field
  {
    Field(name, V.storedKind)
  }

  /// The field of an optional scalar property.
  public static func field<Root, V: StoredScalar>(
    _ name: String, _ keyPath: KeyPath<Root, V?>, in entity: String
  ) throws -> Field {
    Field(name, V.storedKind, isOptional: true)
  }

  /// The field of any other `Codable` property, with the kind the `Codable` schema gives it.
  public static func field<Root, V: Decodable>(_ name: String, _ keyPath: KeyPath<Root, V>, in entity: String)
    throws -> Field
  {
    Field(name, try FieldKind.probing(V.self, field: name, in: entity))
  }

  /// The field of any other optional `Codable` property.
  public static func field<Root, V: Decodable>(
    _ name: String, _ keyPath: KeyPath<Root, V?>, in entity: String
  ) throws -> Field {
    Field(name, try FieldKind.probing(V.self, field: name, in: entity), isOptional: true)
  }

  /// The stored form of a property's initial value, for ``Storable/fieldDefaults``; `nil` when
  /// it has none (a `nil` initial value, or one that cannot be stored).
  public static func defaultValue<Root, V: Encodable>(
    _ keyPath: KeyPath<Root, V>, _ value: V, in entity: String
  )
    -> Value?
  {
    guard let stored = try? Self.value(value, "", in: entity), !stored.isNull else { return nil }
    return stored
  }

  // MARK: Encoding

  // One pair (plain and optional) per stored scalar type, so that the call in the generated
  // code is a direct call the compiler picks by the property's type.

  /// A `Bool` property's value.
  public static func value(_ value: Bool, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Bool` property's value, or ``Value/null``.
  public static func value(_ value: Bool?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// A `String` property's value.
  public static func value(_ value: String, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `String` property's value, or ``Value/null``.
  public static func value(_ value: String?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// A `Double` property's value.
  public static func value(_ value: Double, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Double` property's value, or ``Value/null``.
  public static func value(_ value: Double?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// A `Float` property's value.
  public static func value(_ value: Float, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Float` property's value, or ``Value/null``.
  public static func value(_ value: Float?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// A `Date` property's value.
  public static func value(_ value: Date, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Date` property's value, or ``Value/null``.
  public static func value(_ value: Date?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `UUID` property's value.
  public static func value(_ value: UUID, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `UUID` property's value, or ``Value/null``.
  public static func value(_ value: UUID?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// A `Data` property's value.
  public static func value(_ value: Data, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Data` property's value, or ``Value/null``.
  public static func value(_ value: Data?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `URL` property's value.
  public static func value(_ value: URL, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `URL` property's value, or ``Value/null``.
  public static func value(_ value: URL?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `Int` property's value.
  public static func value(_ value: Int, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Int` property's value, or ``Value/null``.
  public static func value(_ value: Int?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `Int8` property's value.
  public static func value(_ value: Int8, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Int8` property's value, or ``Value/null``.
  public static func value(_ value: Int8?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `Int16` property's value.
  public static func value(_ value: Int16, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Int16` property's value, or ``Value/null``.
  public static func value(_ value: Int16?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `Int32` property's value.
  public static func value(_ value: Int32, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Int32` property's value, or ``Value/null``.
  public static func value(_ value: Int32?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `Int64` property's value.
  public static func value(_ value: Int64, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `Int64` property's value, or ``Value/null``.
  public static func value(_ value: Int64?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `UInt` property's value.
  public static func value(_ value: UInt, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `UInt` property's value, or ``Value/null``.
  public static func value(_ value: UInt?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `UInt8` property's value.
  public static func value(_ value: UInt8, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `UInt8` property's value, or ``Value/null``.
  public static func value(_ value: UInt8?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `UInt16` property's value.
  public static func value(_ value: UInt16, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `UInt16` property's value, or ``Value/null``.
  public static func value(_ value: UInt16?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `UInt32` property's value.
  public static func value(_ value: UInt32, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `UInt32` property's value, or ``Value/null``.
  public static func value(_ value: UInt32?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }
  /// An `UInt64` property's value.
  public static func value(_ value: UInt64, _ name: String, in entity: String) throws -> Value {
    try scalar(value, name, entity)
  }
  /// An optional `UInt64` property's value, or ``Value/null``.
  public static func value(_ value: UInt64?, _ name: String, in entity: String) throws -> Value {
    try value.map { try scalar($0, name, entity) } ?? .null
  }

  /// An enum's raw value.
  public static func value<V: RawRepresentable & Encodable>(_ value: V, _ name: String, in entity: String)
    throws -> Value where V.RawValue: StoredScalar
  {
    try scalar(value.rawValue, name, entity)
  }

  /// An optional enum's raw value, or ``Value/null``.
  public static func value<V: RawRepresentable & Encodable>(_ value: V?, _ name: String, in entity: String)
    throws -> Value where V.RawValue: StoredScalar
  {
    guard let value else { return .null }
    return try scalar(value.rawValue, name, entity)
  }

  /// Any other `Codable` value, as the `Codable` row codec stores it.
  public static func value<V: Encodable>(_ value: V, _ name: String, in entity: String) throws -> Value {
    try StoredEncoding.value(of: value, field: name, entity: entity)
  }

  /// Any other optional `Codable` value, or ``Value/null``.
  public static func value<V: Encodable>(_ value: V?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return try StoredEncoding.value(of: value, field: name, entity: entity)
  }

  private static func scalar<V: StoredScalar>(_ value: V, _ name: String, _ entity: String) throws -> Value {
    guard let stored = value.storedScalar else { throw StoredEncoding.outOfRange(name, entity) }
    return stored
  }
}
