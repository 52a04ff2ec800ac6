import Foundation

/// One stored value: the untyped currency between the typed ``Store`` and a ``StorageBackend``.
///
/// Every backend stores and returns these nine kinds exactly. The rules all backends share:
///
/// - Strings compare byte for byte (UTF-8, which is Unicode code-point order). Two strings that
///   Swift considers canonically equal but that differ in their scalars — a precomposed "é" and
///   "e" + combining acute — are *different* values here, as they are on disk.
/// - Dates are kept to the microsecond: ``Value/date(_:)`` values compare by their microsecond
///   count since 1970, and the row codec rounds every `Date` to the nearest microsecond.
/// - Doubles are never NaN (the codec rejects NaN); ±infinity are ordinary values.
/// - A ``Value/document(_:)`` holds a nested `Codable` value as canonical JSON bytes; it round-trips
///   exactly and compares only for equality.
///
/// ## Topics
/// - ``kind``
/// - ``isNull``
public enum Value: Sendable {
  /// The absence of a value (an optional field that is `nil`).
  case null
  /// A Boolean.
  case bool(Bool)
  /// A signed 64-bit integer. Every Swift integer type is stored as this.
  case int(Int64)
  /// A double-precision float, never NaN.
  case double(Double)
  /// A string, kept byte for byte.
  case string(String)
  /// Raw bytes.
  case bytes(Data)
  /// A point in time, kept to the microsecond.
  case date(Date)
  /// A UUID.
  case uuid(UUID)
  /// A nested `Codable` value (array, struct, dictionary) as canonical JSON bytes.
  case document(Data)

  /// The kind of this value, or `nil` for ``null``.
  public var kind: FieldKind? {
    switch self {
    case .null: nil
    case .bool: .bool
    case .int: .int
    case .double: .double
    case .string: .string
    case .bytes: .bytes
    case .date: .date
    case .uuid: .uuid
    case .document: .document
    }
  }

  /// Whether this is ``null``.
  public var isNull: Bool {
    if case .null = self { return true }
    return false
  }
}

extension Value {
  /// The number of microseconds since 1970-01-01 00:00:00 UTC, rounded to the nearest, that a
  /// date is stored as. Backends that store dates as integers use exactly this.
  ///
  /// A date whose time is NaN, which no store accepts (``CofferError/Code/invalidValue``), counts
  /// as `Int64.min` here, so that comparing or hashing one before it is refused does not trap.
  @_spi(Backend) @inlinable
  public static func microseconds(since1970 date: Date) -> Int64 {
    let micros = (date.timeIntervalSince1970 * 1_000_000).rounded()
    if micros.isNaN { return Int64.min }
    if micros >= 9.2e18 { return Int64.max }
    if micros <= -9.2e18 { return Int64.min }
    return Int64(micros)
  }

  /// The date that a stored microsecond count stands for; the inverse of
  /// ``microseconds(since1970:)``.
  @_spi(Backend) @inlinable
  public static func date(microsecondsSince1970 micros: Int64) -> Date {
    Date(timeIntervalSince1970: Double(micros) / 1_000_000)
  }

  /// This date rounded to the microsecond, the form in which every backend returns it. A date
  /// whose time is NaN stays as it is, for the store to refuse.
  public static func normalized(_ date: Date) -> Date {
    if date.timeIntervalSince1970.isNaN { return date }
    return Self.date(microsecondsSince1970: microseconds(since1970: date))
  }
}

extension Value: Equatable {
  /// Equality as every backend sees it: strings byte for byte, dates to the microsecond,
  /// doubles numerically (so `-0.0 == 0.0`), values of different kinds never equal.
  public static func == (lhs: Value, rhs: Value) -> Bool {
    switch (lhs, rhs) {
    case (.null, .null): true
    case (.bool(let a), .bool(let b)): a == b
    case (.int(let a), .int(let b)): a == b
    case (.double(let a), .double(let b)): a == b
    case (.string(let a), .string(let b)): a.utf8.elementsEqual(b.utf8)
    case (.bytes(let a), .bytes(let b)): a == b
    case (.date(let a), .date(let b)):
      microseconds(since1970: a) == microseconds(since1970: b)
    case (.uuid(let a), .uuid(let b)): a == b
    case (.document(let a), .document(let b)): a == b
    default: false
    }
  }
}

extension Value: Hashable {
  /// Hashes consistently with ``==(_:_:)``: strings by their UTF-8 bytes, dates by microsecond.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0 as UInt8)
    case .bool(let v):
      hasher.combine(1 as UInt8)
      hasher.combine(v)
    case .int(let v):
      hasher.combine(2 as UInt8)
      hasher.combine(v)
    case .double(let v):
      hasher.combine(3 as UInt8)
      hasher.combine(v)
    case .string(let v):
      hasher.combine(4 as UInt8)
      hasher.combine(v.utf8.count)
      for byte in v.utf8 { hasher.combine(byte) }
    case .bytes(let v):
      hasher.combine(5 as UInt8)
      hasher.combine(v)
    case .date(let v):
      hasher.combine(6 as UInt8)
      hasher.combine(Value.microseconds(since1970: v))
    case .uuid(let v):
      hasher.combine(7 as UInt8)
      hasher.combine(v)
    case .document(let v):
      hasher.combine(8 as UInt8)
      hasher.combine(v)
    }
  }
}

extension Value: CustomStringConvertible {
  /// A short, readable rendering for messages and the CLI; long strings and bytes are cut.
  public var description: String {
    switch self {
    case .null: return "null"
    case .bool(let v): return String(v)
    case .int(let v): return String(v)
    case .double(let v): return String(v)
    case .string(let v):
      let cut =
        v.unicodeScalars.count > 60
        ? String(String.UnicodeScalarView(v.unicodeScalars.prefix(57))) + "..." : v
      return "\"\(cut)\""
    case .bytes(let v): return "<\(v.count) bytes>"
    case .date(let v):
      return v.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true))
    case .uuid(let v): return v.uuidString
    case .document(let v): return "<document \(v.count) bytes>"
    }
  }
}

extension Value: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
  ExpressibleByFloatLiteral, ExpressibleByStringLiteral
{
  /// `nil` is ``null``.
  public init(nilLiteral: ()) { self = .null }
  /// A Boolean literal.
  public init(booleanLiteral value: Bool) { self = .bool(value) }
  /// An integer literal.
  public init(integerLiteral value: Int64) { self = .int(value) }
  /// A floating-point literal.
  public init(floatLiteral value: Double) { self = .double(value) }
  /// A string literal.
  public init(stringLiteral value: String) { self = .string(value) }
}

extension Value {
  /// Whether the value is a NaN double or a date whose time is NaN: no row can hold it.
  var isNaN: Bool {
    switch self {
    case .double(let double): double.isNaN
    case .date(let date): date.timeIntervalSince1970.isNaN
    default: false
    }
  }
}
