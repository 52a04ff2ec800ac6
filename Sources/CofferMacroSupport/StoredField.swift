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

  /// A scalar property's value.
  @inlinable
  public static func value<V: StoredScalar>(_ value: V, _ name: String, in entity: String) throws -> Value {
    guard let stored = value.storedScalar else { throw outOfRange(value, name, entity) }
    return stored
  }

  /// An optional scalar property's value, or ``Value/null``.
  @inlinable
  public static func value<V: StoredScalar>(_ value: V?, _ name: String, in entity: String) throws -> Value {
    guard let value else { return .null }
    guard let stored = value.storedScalar else { throw outOfRange(value, name, entity) }
    return stored
  }

  /// An enum's raw value.
  @inlinable
  public static func value<V: RawRepresentable & Encodable>(_ value: V, _ name: String, in entity: String)
    throws -> Value where V.RawValue: StoredScalar
  {
    try Self.value(value.rawValue, name, in: entity)
  }

  /// An optional enum's raw value, or ``Value/null``.
  @inlinable
  public static func value<V: RawRepresentable & Encodable>(_ value: V?, _ name: String, in entity: String)
    throws -> Value where V.RawValue: StoredScalar
  {
    guard let value else { return .null }
    return try Self.value(value.rawValue, name, in: entity)
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

  @usableFromInline
  static func outOfRange(_ value: some StoredScalar, _ name: String, _ entity: String) -> CofferError {
    StoredEncoding.outOfRange(name, entity)
  }
}
