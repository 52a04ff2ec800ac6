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
  // code is a direct call the compiler picks by the property's type, and inlines.

  /// A `Bool` property's value.
  @inlinable public static func value(_ value: Bool, _ name: String, in entity: String) throws -> Value {
    .bool(value)
  }
  /// An optional `Bool` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Bool?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .bool(value)
  }
  /// A `String` property's value.
  @inlinable public static func value(_ value: String, _ name: String, in entity: String) throws -> Value {
    .string(value)
  }
  /// An optional `String` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: String?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .string(value)
  }
  /// A `Double` property's value.
  @inlinable public static func value(_ value: Double, _ name: String, in entity: String) throws -> Value {
    .double(value)
  }
  /// An optional `Double` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Double?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .double(value)
  }
  /// A `Float` property's value.
  @inlinable public static func value(_ value: Float, _ name: String, in entity: String) throws -> Value {
    .double(Double(value))
  }
  /// An optional `Float` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Float?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .double(Double(value))
  }
  /// A `Date` property's value.
  @inlinable public static func value(_ value: Date, _ name: String, in entity: String) throws -> Value {
    .date(Value.normalized(value))
  }
  /// An optional `Date` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Date?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .date(Value.normalized(value))
  }
  /// A `UUID` property's value.
  @inlinable public static func value(_ value: UUID, _ name: String, in entity: String) throws -> Value {
    .uuid(value)
  }
  /// An optional `UUID` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: UUID?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .uuid(value)
  }
  /// A `Data` property's value.
  @inlinable public static func value(_ value: Data, _ name: String, in entity: String) throws -> Value {
    .bytes(value)
  }
  /// An optional `Data` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Data?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .bytes(value)
  }
  /// A `URL` property's value.
  public static func value(_ value: URL, _ name: String, in entity: String) throws -> Value {
    .string(value.absoluteString)
  }
  /// An optional `URL` property's value, or ``Value/null``.
  public static func value(_ value: URL?, _ name: String, in entity: String) throws -> Value {
    value.map { .string($0.absoluteString) } ?? .null
  }
  /// An `Int` property's value.
  @inlinable public static func value(_ value: Int, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `Int` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Int?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `Int8` property's value.
  @inlinable public static func value(_ value: Int8, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `Int8` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Int8?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `Int16` property's value.
  @inlinable public static func value(_ value: Int16, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `Int16` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Int16?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `Int32` property's value.
  @inlinable public static func value(_ value: Int32, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `Int32` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Int32?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `Int64` property's value.
  @inlinable public static func value(_ value: Int64, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `Int64` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: Int64?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `UInt` property's value.
  @inlinable public static func value(_ value: UInt, _ name: String, in entity: String) throws -> Value {
    guard let exact = Int64(exactly: value) else { throw outOfRange(name, entity) }
    return .int(exact)
  }
  /// An optional `UInt` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: UInt?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    guard let exact = Int64(exactly: value) else { throw outOfRange(name, entity) }
    return .int(exact)
  }
  /// An `UInt8` property's value.
  @inlinable public static func value(_ value: UInt8, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `UInt8` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: UInt8?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `UInt16` property's value.
  @inlinable public static func value(_ value: UInt16, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `UInt16` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: UInt16?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `UInt32` property's value.
  @inlinable public static func value(_ value: UInt32, _ name: String, in entity: String) throws -> Value {
    .int(Int64(value))
  }
  /// An optional `UInt32` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: UInt32?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    return .int(Int64(value))
  }
  /// An `UInt64` property's value.
  @inlinable public static func value(_ value: UInt64, _ name: String, in entity: String) throws -> Value {
    guard let exact = Int64(exactly: value) else { throw outOfRange(name, entity) }
    return .int(exact)
  }
  /// An optional `UInt64` property's value, or ``Value/null``.
  @inlinable public static func value(_ value: UInt64?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    guard let exact = Int64(exactly: value) else { throw outOfRange(name, entity) }
    return .int(exact)
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

  /// The error for an unsigned integer above `Int64.max`.
  @usableFromInline static func outOfRange(_ name: String, _ entity: String) -> CofferError {
    StoredEncoding.outOfRange(name, entity)
  }

  private static func scalar<V: StoredScalar>(_ value: V, _ name: String, _ entity: String) throws -> Value {
    guard let stored = value.storedScalar else { throw StoredEncoding.outOfRange(name, entity) }
    return stored
  }
}
