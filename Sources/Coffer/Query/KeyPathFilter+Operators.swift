// Comparisons of a key path with a value of the property's type, built on ``FieldRef``'s
// operators. The value must have the property's type (an optional property also takes `nil`),
// so comparing a `String` property with an `Int` does not compile.

/// Equal (`== nil` matches null).
public func == <Root: KeyPathStorable, V: ValueConvertible>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
> {
  KeyPathFilter(lhs) { $0 == rhs }
}

/// Not equal (`!= nil` matches non-null; `!= x` never matches null).
public func != <Root: KeyPathStorable, V: ValueConvertible>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
> {
  KeyPathFilter(lhs) { $0 != rhs }
}

/// Less than (never matches null).
public func < <Root: KeyPathStorable, V: ValueConvertible>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
> {
  KeyPathFilter(lhs) { $0 < rhs }
}

/// Less than or equal (never matches null).
public func <= <Root: KeyPathStorable, V: ValueConvertible>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
> {
  KeyPathFilter(lhs) { $0 <= rhs }
}

/// Greater than (never matches null).
public func > <Root: KeyPathStorable, V: ValueConvertible>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
> {
  KeyPathFilter(lhs) { $0 > rhs }
}

/// Greater than or equal (never matches null).
public func >= <Root: KeyPathStorable, V: ValueConvertible>(lhs: KeyPath<Root, V>, rhs: V) -> KeyPathFilter<
  Root
> {
  KeyPathFilter(lhs) { $0 >= rhs }
}

extension KeyPathFilter {
  /// The property equals one of the values (an empty list matches nothing; `nil` in the list
  /// of an optional property matches null).
  public static func isIn<V: ValueConvertible>(_ keyPath: KeyPath<Root, V>, _ values: [V]) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.isIn(values) }
  }

  /// The string property has the words a full-text query asks for (see
  /// ``Filter/matches(field:query:)``): `.matches(\.body, "swif* NOT draft")`.
  public static func matches(_ keyPath: KeyPath<Root, String>, _ query: String) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.matches(query) }
  }

  /// The optional string property has the words a full-text query asks for (never matches null).
  public static func matches(_ keyPath: KeyPath<Root, String?>, _ query: String) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.matches(query) }
  }

  /// The string property contains the text, case-sensitively, or ignoring ASCII case.
  public static func contains(
    _ keyPath: KeyPath<Root, String>, _ text: String, ignoringCase: Bool = false
  ) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.contains(text, ignoringCase: ignoringCase) }
  }

  /// The optional string property contains the text, case-sensitively, or ignoring ASCII case (never matches null).
  public static func contains(
    _ keyPath: KeyPath<Root, String?>, _ text: String, ignoringCase: Bool = false
  ) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.contains(text, ignoringCase: ignoringCase) }
  }

  /// The string property starts with the text, case-sensitively, or ignoring ASCII case.
  public static func hasPrefix(
    _ keyPath: KeyPath<Root, String>, _ text: String, ignoringCase: Bool = false
  ) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.hasPrefix(text, ignoringCase: ignoringCase) }
  }

  /// The optional string property starts with the text, case-sensitively, or ignoring ASCII case (never matches null).
  public static func hasPrefix(
    _ keyPath: KeyPath<Root, String?>, _ text: String, ignoringCase: Bool = false
  ) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.hasPrefix(text, ignoringCase: ignoringCase) }
  }

  /// The string property ends with the text, case-sensitively, or ignoring ASCII case.
  public static func hasSuffix(
    _ keyPath: KeyPath<Root, String>, _ text: String, ignoringCase: Bool = false
  ) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.hasSuffix(text, ignoringCase: ignoringCase) }
  }

  /// The optional string property ends with the text, case-sensitively, or ignoring ASCII case (never matches null).
  public static func hasSuffix(
    _ keyPath: KeyPath<Root, String?>, _ text: String, ignoringCase: Bool = false
  ) -> KeyPathFilter {
    KeyPathFilter(keyPath) { $0.hasSuffix(text, ignoringCase: ignoringCase) }
  }
}

/// An enum that declares `ValueConvertible` (`extension Color: ValueConvertible {}`) compares by
/// raw value wherever a ``ValueConvertible`` is taken, ``FieldRef``'s operators included; key-path
/// filters and sorts compare any enum with a scalar raw value by raw value without it.
extension ValueConvertible where Self: RawRepresentable, RawValue: ValueConvertible {
  /// The raw value's stored value.
  public var storedValue: Value { rawValue.storedValue }
}
