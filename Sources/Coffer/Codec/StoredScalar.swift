import Foundation

/// A Swift type stored as one scalar ``Value`` of a fixed ``FieldKind``: the integers, `Bool`,
/// `Float`/`Double`, `String`, `Date`, `UUID`, `Data` and `URL`.
///
/// The code `@Storable` generates converts these directly, without going through `Codable`;
/// each conversion gives exactly the value the `Codable` row codec would. Each is also a
/// ``ValueConvertible``, so a property of one of these types can be compared in a filter.
public protocol StoredScalar: Codable, ValueConvertible {
  /// The kind of field values of this type are stored in.
  @_spi(Backend) static var storedKind: FieldKind { get }
  /// The stored value, or `nil` when it does not fit (an unsigned integer above `Int64.max`).
  @_spi(Backend) var storedScalar: Value? { get }
  /// The value read back from a stored value, or `nil` when the value is of another kind or
  /// out of range.
  @_spi(Backend) init?(storedScalar: Value)
  /// The value of a field read in place with one of ``StoredFields``' typed accessors, or `nil`
  /// to read it through ``init(storedScalar:)`` instead (for null, another kind, a value out of
  /// range, or a type with no such accessor, which is the default).
  @_spi(Backend) static func read(from fields: some StoredFields, at position: Int) -> Self?
}

extension StoredScalar {
  /// `nil`: read through ``init(storedScalar:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int) -> Self?
  { nil }

  /// ``storedScalar``, for filters.
  public var storedValue: Value { storedScalar ?? .null }
}

extension Bool: StoredScalar {
  /// ``FieldKind/bool``.
  @_spi(Backend) public static var storedKind: FieldKind { .bool }
  /// ``Value/bool(_:)``.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .bool(self) }
  /// From ``Value/bool(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .bool(let v) = storedScalar else { return nil }
    self = v
  }
  /// ``StoredFields/bool(at:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int) -> Bool?
  {
    fields.bool(at: position)
  }
}

extension String: StoredScalar {
  /// ``FieldKind/string``.
  @_spi(Backend) public static var storedKind: FieldKind { .string }
  /// ``Value/string(_:)``.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .string(self) }
  /// From ``Value/string(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .string(let v) = storedScalar else { return nil }
    self = v
  }
  /// ``StoredFields/string(at:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int)
    -> String?
  {
    fields.string(at: position)
  }
}

extension Double: StoredScalar {
  /// ``FieldKind/double``.
  @_spi(Backend) public static var storedKind: FieldKind { .double }
  /// ``Value/double(_:)``.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .double(self) }
  /// From ``Value/double(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .double(let v) = storedScalar else { return nil }
    self = v
  }
  /// ``StoredFields/double(at:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int)
    -> Double?
  {
    fields.double(at: position)
  }
}

extension Float: StoredScalar {
  /// ``FieldKind/double``.
  @_spi(Backend) public static var storedKind: FieldKind { .double }
  /// ``Value/double(_:)``.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .double(Double(self)) }
  /// From ``Value/double(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .double(let v) = storedScalar else { return nil }
    self = Float(v)
  }
  /// ``StoredFields/double(at:)``, narrowed.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int)
    -> Float?
  {
    fields.double(at: position).map(Float.init)
  }
}

extension Date: StoredScalar {
  /// ``FieldKind/date``.
  @_spi(Backend) public static var storedKind: FieldKind { .date }
  /// ``Value/date(_:)`` of this date rounded to the microsecond (``Value/normalized(_:)``),
  /// the form every backend stores.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .date(Value.normalized(self)) }
  /// From ``Value/date(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .date(let v) = storedScalar else { return nil }
    self = v
  }
  /// ``StoredFields/date(at:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int) -> Date?
  {
    fields.date(at: position)
  }
}

extension UUID: StoredScalar {
  /// ``FieldKind/uuid``.
  @_spi(Backend) public static var storedKind: FieldKind { .uuid }
  /// ``Value/uuid(_:)``.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .uuid(self) }
  /// From ``Value/uuid(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .uuid(let v) = storedScalar else { return nil }
    self = v
  }
  /// ``StoredFields/uuid(at:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int) -> UUID?
  {
    fields.uuid(at: position)
  }
}

extension Data: StoredScalar {
  /// ``FieldKind/bytes``.
  @_spi(Backend) public static var storedKind: FieldKind { .bytes }
  /// ``Value/bytes(_:)``.
  @_spi(Backend) @inlinable public var storedScalar: Value? { .bytes(self) }
  /// From ``Value/bytes(_:)``.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .bytes(let v) = storedScalar else { return nil }
    self = v
  }
}

extension URL: StoredScalar {
  /// ``FieldKind/string``: a URL is stored as its absolute string.
  @_spi(Backend) public static var storedKind: FieldKind { .string }
  /// ``Value/string(_:)`` of the absolute string.
  @_spi(Backend) public var storedScalar: Value? { .string(absoluteString) }
  /// From ``Value/string(_:)``, when the string is a URL.
  @_spi(Backend) public init?(storedScalar: Value) {
    guard case .string(let v) = storedScalar, let url = URL(string: v) else { return nil }
    self = url
  }
}

/// Integers are stored as ``Value/int(_:)``; reading one back checks that it fits.
extension StoredScalar where Self: FixedWidthInteger {
  /// ``FieldKind/int``.
  @_spi(Backend) public static var storedKind: FieldKind { .int }
  /// ``Value/int(_:)``, or `nil` above `Int64.max`.
  @_spi(Backend) @inlinable public var storedScalar: Value? { Int64(exactly: self).map(Value.int) }
  /// From ``Value/int(_:)``, when it fits.
  @_spi(Backend) @inlinable public init?(storedScalar: Value) {
    guard case .int(let v) = storedScalar, let exact = Self(exactly: v) else { return nil }
    self = exact
  }
  /// ``StoredFields/int(at:)``, when it fits.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int) -> Self?
  {
    fields.int(at: position).flatMap { Self(exactly: $0) }
  }
  /// ``Value/int(_:)``, for filters; an unsigned integer above `Int64.max`, which no stored
  /// integer equals, is ``Value/double(_:)``, so comparing an integer field with it fails with
  /// ``CofferError/Code/invalidQuery`` rather than matching the wrong rows.
  @inlinable public var storedValue: Value { Int64(exactly: self).map(Value.int) ?? .double(Double(self)) }
}

extension Int: StoredScalar {
  /// ``StoredFields/int(at:)``, when it fits.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int) -> Int?
  {
    guard let number = fields.int(at: position) else { return nil }
    return Int(exactly: number)
  }
}
extension Int8: StoredScalar {}
extension Int16: StoredScalar {}
extension Int32: StoredScalar {}
extension Int64: StoredScalar {
  /// ``StoredFields/int(at:)``.
  @_spi(Backend) @inlinable public static func read(from fields: some StoredFields, at position: Int)
    -> Int64?
  {
    fields.int(at: position)
  }
}
extension UInt: StoredScalar {}
extension UInt8: StoredScalar {}
extension UInt16: StoredScalar {}
extension UInt32: StoredScalar {}
extension UInt64: StoredScalar {}
