import Foundation

/// How ``MigrationStep/changeKind(_:entity:field:to:isOptional:using:)`` turns each stored
/// value of a field into a value of its new kind.
///
/// A conversion sees only non-null values; a null stays null. One that cannot convert a value
/// throws, and the step fails naming the row's id and the field, applying nothing.
public struct FieldConversion: Sendable {
  /// A short name for reports.
  public let name: String
  let convert: @Sendable (Value) throws -> Value
  /// Which built-in conversion this is; `nil` for a ``custom(_:_:)`` one. A backend may run a
  /// built-in one inside its engine (see ``SchemaEditor/copyRows(from:into:converting:)``).
  @_spi(Backend) public let builtIn: BuiltIn?

  /// The built-in conversions, by name.
  @_spi(Backend) public enum BuiltIn: Sendable, Hashable, CaseIterable {
    case intToString, stringToInt, intToDouble, doubleToInt, doubleToString
    case boolToInt, intToBool, uuidToString, stringToUUID

    /// The conversion itself.
    public var conversion: FieldConversion {
      switch self {
      case .intToString: .intToString
      case .stringToInt: .stringToInt
      case .intToDouble: .intToDouble
      case .doubleToInt: .doubleToInt
      case .doubleToString: .doubleToString
      case .boolToInt: .boolToInt
      case .intToBool: .intToBool
      case .uuidToString: .uuidToString
      case .stringToUUID: .stringToUUID
      }
    }

    /// Converts a non-null value as ``FieldConversion`` does; throws for a value it cannot
    /// convert.
    public func convert(_ value: Value) throws -> Value { try conversion.convert(value) }

    /// Whether it is the conversion from a field of kind `old` to one of kind `new`.
    public func converts(_ old: FieldKind, to new: FieldKind) -> Bool {
      FieldConversion.builtIn(from: old, to: new)?.builtIn == self
    }

    /// Whether it converts every value of its input kind: such a conversion never fails a step.
    public var convertsEveryValue: Bool {
      switch self {
      case .intToString, .doubleToString, .boolToInt, .uuidToString: true
      case .stringToInt, .intToDouble, .doubleToInt, .intToBool, .stringToUUID: false
      }
    }
  }

  init(name: String, builtIn: BuiltIn? = nil, convert: @escaping @Sendable (Value) throws -> Value) {
    self.name = name
    self.builtIn = builtIn
    self.convert = convert
  }

  /// A conversion of your own: return the new value (``Value/null`` only for an optional
  /// field), or throw to fail the step.
  public static func custom(_ name: String = "custom", _ convert: @escaping @Sendable (Value) throws -> Value)
    -> FieldConversion
  {
    FieldConversion(name: name, convert: convert)
  }

  /// An integer as its decimal text: `42` → `"42"`.
  public static let intToString = FieldConversion(name: "int to string", builtIn: .intToString) { value in
    guard case .int(let number) = value else { throw NotConvertible() }
    return .string(String(number))
  }

  /// Decimal text as an integer: `"42"` → `42`. Anything else (spaces, a fraction, a number
  /// outside `Int64`) fails the step.
  public static let stringToInt = FieldConversion(name: "string to int", builtIn: .stringToInt) { value in
    guard case .string(let text) = value, let number = Int64(text) else { throw NotConvertible() }
    return .int(number)
  }

  /// An integer as a double, when the double holds it exactly (every integer up to 2^53 in
  /// size); any other fails the step rather than round.
  public static let intToDouble = FieldConversion(name: "int to double", builtIn: .intToDouble) { value in
    guard case .int(let number) = value, let double = Double(exactly: number) else { throw NotConvertible() }
    return .double(double)
  }

  /// A double that holds a whole number inside `Int64` as that integer; any other fails the
  /// step rather than round.
  public static let doubleToInt = FieldConversion(name: "double to int", builtIn: .doubleToInt) { value in
    guard case .double(let double) = value, let number = Int64(exactly: double) else {
      throw NotConvertible()
    }
    return .int(number)
  }

  /// A double as the shortest text that reads back as the same double: `0.1` → `"0.1"`.
  public static let doubleToString = FieldConversion(name: "double to string", builtIn: .doubleToString) {
    value in
    guard case .double(let double) = value else { throw NotConvertible() }
    return .string(String(double))
  }

  /// A Boolean as `1` or `0`.
  public static let boolToInt = FieldConversion(name: "bool to int", builtIn: .boolToInt) { value in
    guard case .bool(let flag) = value else { throw NotConvertible() }
    return .int(flag ? 1 : 0)
  }

  /// `1` as true and `0` as false; any other integer fails the step.
  public static let intToBool = FieldConversion(name: "int to bool", builtIn: .intToBool) { value in
    guard case .int(let number) = value, number == 0 || number == 1 else { throw NotConvertible() }
    return .bool(number == 1)
  }

  /// A UUID as its text (upper-case, as `UUID.uuidString`).
  public static let uuidToString = FieldConversion(name: "uuid to string", builtIn: .uuidToString) { value in
    guard case .uuid(let uuid) = value else { throw NotConvertible() }
    return .string(uuid.uuidString)
  }

  /// UUID text as a UUID; text that is not one fails the step.
  public static let stringToUUID = FieldConversion(name: "string to uuid", builtIn: .stringToUUID) { value in
    guard case .string(let text) = value, let uuid = UUID(uuidString: text) else { throw NotConvertible() }
    return .uuid(uuid)
  }

  /// Any value as a value of `kind` by the built-in conversions above, or `nil` when Coffer
  /// has none for the pair.
  public static func builtIn(from old: FieldKind, to new: FieldKind) -> FieldConversion? {
    switch (old, new) {
    case (.int, .string): .intToString
    case (.string, .int): .stringToInt
    case (.int, .double): .intToDouble
    case (.double, .int): .doubleToInt
    case (.double, .string): .doubleToString
    case (.bool, .int): .boolToInt
    case (.int, .bool): .intToBool
    case (.uuid, .string): .uuidToString
    case (.string, .uuid): .stringToUUID
    default: nil
    }
  }
}

/// Thrown by a built-in ``FieldConversion`` for a value it cannot convert; the step reports the
/// row and field, never the value.
struct NotConvertible: Error {}
