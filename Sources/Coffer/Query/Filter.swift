/// A condition on an entity's rows: the `where` of a ``Query`` and of a delete-matching change.
///
/// Filters name fields by their stored name and compare them with ``Value``s. Their meaning is
/// the same on every backend:
///
/// - `== .null` (`FieldRef("nick") == nil`) matches rows where the field is null, `!= .null`
///   rows where it is not. Every other comparison, including `!=` with a non-null value, never matches null.
/// - ``not(_:)`` matches exactly the rows its operand does not: `not(f)` and `f` together match
///   every row once.
/// - Strings compare by Unicode code point (byte-wise UTF-8). ``StringMatch`` operations treat
///   `%`, `_` and `*` as ordinary characters; they are case-sensitive, except the
///   `…IgnoringCase` ones, which fold ASCII letters only (`A`–`Z` to `a`–`z`).
/// - ``compareFields(field:op:other:)`` compares two fields of one row; a row where either is
///   null never matches it.
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
  /// `field op other`: two fields of one row compared with each other, in the order of
  /// ``Filter`` (strings by code point, dates chronologically, …).
  ///
  /// Both fields must have the same ``FieldKind``, and it may not be a document. A row where
  /// either field is null never matches, whatever the operator (`==` included: ask about
  /// nulls with `== nil`), so `not(_:)` of it does match such a row.
  case compareFields(field: String, op: ComparisonOperator, other: String)
  /// The string field has the words the full-text query asks for: `swift`, `swif*`,
  /// `"exact words"`, `AND`, `OR`, `NOT` and parentheses, with Coffer's one definition of a
  /// word on every backend (see <doc:Searching>). A null field never matches.
  ///
  /// - Throws: (when the query runs) ``CofferError/Code/invalidQuery`` for a query with no word
  ///   to search for or with unbalanced quotes, parentheses or operators.
  case matches(field: String, query: String)
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
      case .compare(let field, _, _), .isIn(let field, _), .string(let field, _, _), .matches(let field, _):
        if !seen.contains(field) { seen.append(field) }
      case .compareFields(let field, _, let other):
        if !seen.contains(field) { seen.append(field) }
        if !seen.contains(other) { seen.append(other) }
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

/// A string test in a ``Filter``. `%`, `_` and `*` are ordinary characters.
///
/// The first three are case-sensitive: they compare bytes. The `…IgnoringCase` ones fold
/// **ASCII** letters only — `A`–`Z` match `a`–`z` — and compare every other character exactly,
/// so `"É"` does not match `"é"` and `"ß"` does not match `"SS"`. ASCII folding is the one
/// every backend computes identically (Unicode folding depends on the database's locale and
/// Unicode version), and is easy to state.
public enum StringMatch: String, Sendable, Hashable, CaseIterable, Codable {
  /// The field contains the pattern (every string contains the empty string).
  case contains
  /// The field starts with the pattern.
  case hasPrefix
  /// The field ends with the pattern.
  case hasSuffix
  /// The field contains the pattern, ignoring ASCII case.
  case containsIgnoringCase
  /// The field starts with the pattern, ignoring ASCII case.
  case hasPrefixIgnoringCase
  /// The field ends with the pattern, ignoring ASCII case.
  case hasSuffixIgnoringCase
  /// The field equals the pattern, ignoring ASCII case (`""` matches only the empty string).
  case equalIgnoringCase

  /// Whether the test folds ASCII letters before comparing.
  @_spi(Backend) public var ignoresCase: Bool {
    switch self {
    case .contains, .hasPrefix, .hasSuffix: false
    case .containsIgnoringCase, .hasPrefixIgnoringCase, .hasSuffixIgnoringCase, .equalIgnoringCase: true
    }
  }

  /// `text` with the ASCII letters `A`–`Z` turned into `a`–`z`, every other character kept: the
  /// folding the `…IgnoringCase` tests apply to the field and the pattern.
  @_spi(Backend) public static func foldingASCIICase(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 >= 0x41 && $0 <= 0x5A }) else { return text }
    return String(decoding: text.utf8.map { $0 >= 0x41 && $0 <= 0x5A ? $0 + 0x20 : $0 }, as: UTF8.self)
  }
}
