/// The kind of a stored field: what a ``Value`` in that position may be (besides ``Value/null``
/// when the field is optional).
public enum FieldKind: String, Sendable, Hashable, Codable, CaseIterable, CustomStringConvertible {
  /// ``Value/bool(_:)``
  case bool
  /// ``Value/int(_:)``
  case int
  /// ``Value/double(_:)``
  case double
  /// ``Value/string(_:)``
  case string
  /// ``Value/bytes(_:)``
  case bytes
  /// ``Value/date(_:)``
  case date
  /// ``Value/uuid(_:)``
  case uuid
  /// ``Value/document(_:)``
  case document

  /// Whether values of this kind have an order (and so can be sorted and compared with `<`).
  /// Documents compare only for equality.
  @_spi(Backend) public var isOrdered: Bool { self != .document }

  /// Whether this kind can be an entity's id: `int`, `string` or `uuid`.
  @_spi(Backend) public var canBeID: Bool { self == .int || self == .string || self == .uuid }

  /// The kind's name, as it appears in schemas and messages.
  public var description: String { rawValue }
}
