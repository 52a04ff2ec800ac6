import Foundation

/// A Swift value that can stand on the right of a filter: `FieldRef("age") > 30`.
public protocol ValueConvertible: Sendable {
  /// The value as stored.
  var storedValue: Value { get }
}

extension Value: ValueConvertible {
  /// Itself.
  public var storedValue: Value { self }
}
extension Bool: ValueConvertible {
  /// ``Value/bool(_:)``.
  public var storedValue: Value { .bool(self) }
}
extension Double: ValueConvertible {
  /// ``Value/double(_:)``.
  public var storedValue: Value { .double(self) }
}
extension Float: ValueConvertible {
  /// ``Value/double(_:)``.
  public var storedValue: Value { .double(Double(self)) }
}
extension Int8: ValueConvertible {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
}
extension Int16: ValueConvertible {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
}
extension Int32: ValueConvertible {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
}
extension UInt8: ValueConvertible {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
}
extension UInt16: ValueConvertible {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
}
extension UInt32: ValueConvertible {
  /// ``Value/int(_:)``.
  public var storedValue: Value { .int(Int64(self)) }
}
extension Date: ValueConvertible {
  /// ``Value/date(_:)``, rounded to the microsecond.
  public var storedValue: Value { .date(Value.normalized(self)) }
}
extension Data: ValueConvertible {
  /// ``Value/bytes(_:)``.
  public var storedValue: Value { .bytes(self) }
}
extension Optional: ValueConvertible where Wrapped: ValueConvertible {
  /// The wrapped value's, or ``Value/null``.
  public var storedValue: Value { self?.storedValue ?? .null }
}
extension Int64: ValueConvertible {}
extension Int: ValueConvertible {}
extension String: ValueConvertible {}
extension UUID: ValueConvertible {}
