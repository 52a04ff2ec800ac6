/// A condition on an entity's rows: the `where` of a ``Query`` and of a delete-matching change.
///
/// Filters name fields by their stored name and compare them with ``Value``s. Their meaning is
/// the same on every backend:
///
/// - `== .null` (`FieldRef("nick") == nil`) matches rows where the field is null, `!= .null`
///   rows where it is not. Every other comparison, including `!=` with a non-null value, never matches null.
/// - ``not(_:)`` matches exactly the rows its operand does not: `not(f)` and `f` together match
///   every row once.
/// - Strings compare by Unicode code point (byte-wise UTF-8). ``StringMatch`` operations are
///   case-sensitive and treat `%`, `_` and `*` as ordinary characters.
/// - ``isIn(_:_:)`` with an empty list matches nothing; a `.null` in the list matches null.
///
/// Build filters with the operators on ``FieldRef``
/// (`FieldRef("age") > 30 && FieldRef("name").hasPrefix("A")`) or, on a ``KeyPathStorable``
/// type, with key paths (``KeyPathFilter``).
///
/// ## Combining a list of filters
///
/// `&&` and `||` join two filters; to join a list built at run time, use the cases
/// ``and(_:)`` and ``or(_:)`` directly:
///
/// ```swift
/// let tags = ["urgent", "later"]
/// let anyTag = Filter.or(tags.map { FieldRef("body").contains($0) })   // at least one
/// let allTags = Filter.and(tags.map { FieldRef("body").contains($0) })  // every one
/// try await store.query(Note.self).filter(anyTag).fetch()
/// ```
///
/// Mind the empty list: `.or([])` matches **nothing** and `.and([])` matches **every** row, so
/// `.or(tags.map …)` over an empty `tags` selects no rows. For equality with any of several
/// values, ``isIn(_:_:)`` (``FieldRef/isIn(_:)``) says it in one case:
/// `FieldRef("threadID").isIn([1, 2, 3])`.
public enum Filter: Sendable, Hashable {
  /// Matches every row.
  case all
  /// `field op value`.
  case compare(field: String, op: ComparisonOperator, value: Value)
  /// The field equals one of the values.
  case isIn(String, [Value])
  /// A substring test on a string field.
  case string(field: String, match: StringMatch, pattern: String)
  /// Every operand matches (an empty list matches every row).
  case and([Filter])
  /// At least one operand matches (an empty list matches nothing).
  case or([Filter])
  /// The operand does not match.
  indirect case not(Filter)

  /// The field names the filter mentions, each once, in first-mention order.
  public var fields: [String] {
    var seen: [String] = []
    func visit(_ filter: Filter) {
      switch filter {
      case .all: break
      case .compare(let field, _, _), .isIn(let field, _), .string(let field, _, _):
        if !seen.contains(field) { seen.append(field) }
      case .and(let parts), .or(let parts): parts.forEach(visit)
      case .not(let inner): visit(inner)
      }
    }
    visit(self)
    return seen
  }

  /// Both filters.
  public static func && (lhs: Filter, rhs: Filter) -> Filter {
    switch (lhs, rhs) {
    case (.all, _): rhs
    case (_, .all): lhs
    case (.and(let a), .and(let b)): .and(a + b)
    case (.and(let a), _): .and(a + [rhs])
    case (_, .and(let b)): .and([lhs] + b)
    default: .and([lhs, rhs])
    }
  }

  /// Either filter.
  public static func || (lhs: Filter, rhs: Filter) -> Filter {
    switch (lhs, rhs) {
    case (.or(let a), .or(let b)): .or(a + b)
    case (.or(let a), _): .or(a + [rhs])
    case (_, .or(let b)): .or([lhs] + b)
    default: .or([lhs, rhs])
    }
  }

  /// The negation.
  public static prefix func ! (operand: Filter) -> Filter { .not(operand) }
}

/// A comparison in a ``Filter``.
public enum ComparisonOperator: String, Sendable, Hashable, CaseIterable, Codable {
  /// `==`
  case equal = "=="
  /// `!=`
  case notEqual = "!="
  /// `<`
  case less = "<"
  /// `<=`
  case lessOrEqual = "<="
  /// `>`
  case greater = ">"
  /// `>=`
  case greaterOrEqual = ">="
}

/// A case-sensitive substring test in a ``Filter``. `%`, `_` and `*` are ordinary characters.
public enum StringMatch: String, Sendable, Hashable, CaseIterable, Codable {
  /// The field contains the pattern (every string contains the empty string).
  case contains
  /// The field starts with the pattern.
  case hasPrefix
  /// The field ends with the pattern.
  case hasSuffix
}
