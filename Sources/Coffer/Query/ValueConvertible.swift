import Foundation

/// A Swift value that can stand on the right of a filter: `FieldRef("age") > 30`, `\.age > 30`.
///
/// Every ``StoredScalar`` is one — the integers, `Bool`, `Float`/`Double`, `String`, `Date`,
/// `UUID`, `Data` and `URL` — and so are ``Value`` and an `Optional` of any of them, so a
/// property of a type Coffer stores can be compared with a value of its type. An enum with a
/// scalar raw value compares by its raw value in key-path filters and sorts with nothing
/// declared; see ``KeyPathFilter``.
public protocol ValueConvertible: Sendable {
  /// The value as stored.
  var storedValue: Value { get }
}

extension Value: ValueConvertible {
  /// Itself.
  public var storedValue: Value { self }
}

extension Optional: ValueConvertible where Wrapped: ValueConvertible {
  /// The wrapped value's, or ``Value/null``.
  public var storedValue: Value { self?.storedValue ?? .null }
}

extension Date {
  /// ``Value/date(_:)``, rounded to the microsecond as a stored date is.
  public var storedValue: Value { .date(Value.normalized(self)) }
}
