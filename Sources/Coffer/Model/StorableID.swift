import Foundation

/// A type that can identify a stored record: `Int64`, `Int`, `String` or `UUID`.
public protocol StorableID: Hashable, Sendable, Codable, ValueConvertible {
  /// The id as a stored value.
  var storedValue: Value { get }
  /// The id read back from a stored value, or `nil` if the value is of another kind.
  init?(storedValue: Value)
  /// The field kind ids of this type are stored as.
  static var storedKind: FieldKind { get }
}

extension Int64: StorableID {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(self) }
  /// From ``Value/int(_:)``.
  public init?(storedValue: Value) {
    guard case .int(let v) = storedValue else { return nil }
    self = v
  }
  /// ``FieldKind/int``.
  public static var storedKind: FieldKind { .int }
}

extension Int: StorableID {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
  /// From ``Value/int(_:)``.
  public init?(storedValue: Value) {
    guard case .int(let v) = storedValue, let exact = Int(exactly: v) else { return nil }
    self = exact
  }
  /// ``FieldKind/int``.
  public static var storedKind: FieldKind { .int }
}

extension String: StorableID {
  /// ``Value/string(_:)``.
  public var storedValue: Value { .string(self) }
  /// From ``Value/string(_:)``.
  public init?(storedValue: Value) {
    guard case .string(let v) = storedValue else { return nil }
    self = v
  }
  /// ``FieldKind/string``.
  public static var storedKind: FieldKind { .string }
}

extension UUID: StorableID {
  /// ``Value/uuid(_:)``.
  public var storedValue: Value { .uuid(self) }
  /// From ``Value/uuid(_:)``.
  public init?(storedValue: Value) {
    guard case .uuid(let v) = storedValue else { return nil }
    self = v
  }
  /// ``FieldKind/uuid``.
  public static var storedKind: FieldKind { .uuid }
}
