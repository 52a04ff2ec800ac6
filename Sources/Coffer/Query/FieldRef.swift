/// A field named by its stored name, with operators that build ``Filter``s: the spelling for
/// schemas known only at run time (``DynamicRecord``s, tools). On a ``KeyPathStorable`` type,
/// write filters with key paths instead (``KeyPathFilter``).
///
/// ```swift
/// let recent = FieldRef("threadID") == 7 && FieldRef("date") > cutoff
/// let byName = FieldRef(Contact.CodingKeys.name).hasPrefix("An")
/// let noNick = FieldRef("nick") == nil
/// ```
public struct FieldRef: Sendable, Hashable {
  /// The stored field name.
  public let name: String

  /// A field by its stored name.
  public init(_ name: String) { self.name = name }

  /// A field by its coding key.
  public init(_ key: some CodingKey) { self.name = key.stringValue }

  /// Equal (`== nil` matches null).
  public static func == (lhs: FieldRef, rhs: some ValueConvertible) -> Filter {
    .compare(field: lhs.name, op: .equal, value: rhs.storedValue)
  }
  /// Not equal (`!= nil` matches non-null; `!= x` never matches null).
  public static func != (lhs: FieldRef, rhs: some ValueConvertible) -> Filter {
    .compare(field: lhs.name, op: .notEqual, value: rhs.storedValue)
  }
  /// Null: `FieldRef("readAt") == nil`.
  public static func == (lhs: FieldRef, rhs: _OptionalNilComparisonType) -> Filter {
    .compare(field: lhs.name, op: .equal, value: .null)
  }
  /// Not null: `FieldRef("readAt") != nil`.
  public static func != (lhs: FieldRef, rhs: _OptionalNilComparisonType) -> Filter {
    .compare(field: lhs.name, op: .notEqual, value: .null)
  }
  /// Less than.
  public static func < (lhs: FieldRef, rhs: some ValueConvertible) -> Filter {
    .compare(field: lhs.name, op: .less, value: rhs.storedValue)
  }
  /// Less than or equal.
  public static func <= (lhs: FieldRef, rhs: some ValueConvertible) -> Filter {
    .compare(field: lhs.name, op: .lessOrEqual, value: rhs.storedValue)
  }
  /// Greater than.
  public static func > (lhs: FieldRef, rhs: some ValueConvertible) -> Filter {
    .compare(field: lhs.name, op: .greater, value: rhs.storedValue)
  }
  /// Greater than or equal.
  public static func >= (lhs: FieldRef, rhs: some ValueConvertible) -> Filter {
    .compare(field: lhs.name, op: .greaterOrEqual, value: rhs.storedValue)
  }

  /// Equal to one of the values.
  public func isIn(_ values: [some ValueConvertible]) -> Filter { .isIn(name, values.map(\.storedValue)) }
  /// Contains the text: case-sensitively, or ignoring ASCII case (see ``StringMatch``).
  public func contains(_ text: String, ignoringCase: Bool = false) -> Filter {
    .string(field: name, match: ignoringCase ? .containsIgnoringCase : .contains, pattern: text)
  }
  /// Starts with the text: case-sensitively, or ignoring ASCII case (see ``StringMatch``).
  public func hasPrefix(_ text: String, ignoringCase: Bool = false) -> Filter {
    .string(field: name, match: ignoringCase ? .hasPrefixIgnoringCase : .hasPrefix, pattern: text)
  }
  /// Ends with the text: case-sensitively, or ignoring ASCII case (see ``StringMatch``).
  public func hasSuffix(_ text: String, ignoringCase: Bool = false) -> Filter {
    .string(field: name, match: ignoringCase ? .hasSuffixIgnoringCase : .hasSuffix, pattern: text)
  }
  /// Has the words a full-text query asks for (see ``Filter/matches(field:query:)``):
  /// `FieldRef("body").matches("swift OR \"structured concurrency\"")`.
  public func matches(_ query: String) -> Filter { .matches(field: name, query: query) }
  /// Equals the text: exactly (`==`), or ignoring ASCII case (see ``StringMatch``).
  public func equals(_ text: String, ignoringCase: Bool) -> Filter {
    ignoringCase ? .string(field: name, match: .equalIgnoringCase, pattern: text) : self == text
  }

  /// The two fields are equal (a row where either is null never matches).
  public func equals(_ other: FieldRef) -> Filter {
    .compareFields(field: name, op: .equal, other: other.name)
  }
  /// The two fields differ (a row where either is null never matches).
  public func differs(from other: FieldRef) -> Filter {
    .compareFields(field: name, op: .notEqual, other: other.name)
  }
  /// The first field is less than the second (a row where either is null never matches).
  public static func < (lhs: FieldRef, rhs: FieldRef) -> Filter {
    .compareFields(field: lhs.name, op: .less, other: rhs.name)
  }
  /// The first field is less than or equal to the second (never matches null).
  public static func <= (lhs: FieldRef, rhs: FieldRef) -> Filter {
    .compareFields(field: lhs.name, op: .lessOrEqual, other: rhs.name)
  }
  /// The first field is greater than the second (a row where either is null never matches).
  public static func > (lhs: FieldRef, rhs: FieldRef) -> Filter {
    .compareFields(field: lhs.name, op: .greater, other: rhs.name)
  }
  /// The first field is greater than or equal to the second (never matches null).
  public static func >= (lhs: FieldRef, rhs: FieldRef) -> Filter {
    .compareFields(field: lhs.name, op: .greaterOrEqual, other: rhs.name)
  }
}
