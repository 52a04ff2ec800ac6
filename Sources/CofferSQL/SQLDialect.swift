@_spi(Backend) import Coffer

/// What one SQL engine spells its own way in the statements ``SQLStatement`` builds for every
/// SQL backend.
///
/// The statements themselves — filters, sorts, pages, counts, deletes and updates by query,
/// aggregates, the first rows per value — are written once, in ``SQLStatement``; a dialect
/// supplies only the pieces the engines disagree on: how a bound value is written, the
/// literals of truth, where NULL sorts, list membership, literal string tests, `LIMIT`/`OFFSET`,
/// how names compare, and what the aggregate functions need to give the reference results.
/// Every requirement must keep the reference semantics of the core's evaluator exactly, since
/// the conformance suite compares the backends with it bit for bit.
package protocol SQLDialect: Sendable {
  /// What a statement's bound values are collected in, in placeholder order.
  associatedtype Bindings: SQLBindings

  /// The placeholder of the `number`th bound value, counting from 1 (`?1`, `$1`).
  ///
  /// Placeholders are numbered, so a value may be bound before text that comes earlier in the
  /// statement (the common table expressions of a deep filter) is written.
  static func placeholder(_ number: Int) -> String

  /// A condition that always holds (`1`, `TRUE`), which is also what `IS NOT` compares with.
  static var alwaysTrue: String { get }

  /// A condition that never holds (`0`, `FALSE`).
  static var alwaysFalse: String { get }

  /// The most levels of and/or/not written inline; deeper ones go into common table
  /// expressions, each parsed on its own (`Int.max` for an engine that parses any depth).
  static var inlineDepth: Int { get }

  /// An `ORDER BY` key on a field's column: ascending puts NULL first, descending last.
  static func orderKey(_ column: String, ascending: Bool) -> String

  /// `column` is one of `values` (none of them null, at least one), binding what it needs.
  static func membership(
    _ column: String, _ values: [Value], _ kind: FieldKind, into statement: inout SQLStatement<Self>
  ) -> String

  /// A string test on `column`, case-sensitive or folding ASCII letters only as `match` says,
  /// with `%`, `_` and `*` ordinary characters; `pattern` is empty only for `equalIgnoringCase`.
  static func stringTest(
    _ column: String, _ match: StringMatch, _ pattern: String, into statement: inout SQLStatement<Self>
  ) -> String

  /// A full-text match of `field` of `table` against a query that
  /// ``Filter/matches(field:query:)``'s rules parse, or an error when the engine cannot evaluate
  /// it (``Store`` then resolves the match into ids before the filter reaches the backend).
  static func textMatch(
    _ field: String, of table: SQLTableLayout, _ query: String, into statement: inout SQLStatement<Self>
  ) throws -> String

  /// Appends what keeps `limit` rows (all for `nil`) after skipping `offset`, when there is
  /// anything to cut.
  static func appendSlice(limit: Int?, offset: Int, to statement: inout SQLStatement<Self>)

  /// The form in which the engine compares identifiers, to find a name no column has.
  static func comparedName(_ name: String) -> String

  /// The type a column of a field kind is declared with.
  static func columnType(_ kind: FieldKind) -> String

  /// A name for a new table, column or index: `wanted` itself where the engine can take it and
  /// no name in `taken` (in ``comparedName(_:)`` form) is the same, else a name made from it.
  static func freshName(for wanted: String, avoiding taken: Set<String>) -> String

  /// The smallest or largest value of a column, read back as a value of its kind.
  static func extreme(_ column: String, _ kind: FieldKind, smallest: Bool) -> String

  /// The exact sum of an integer column (see ``SQLAggregateCells/integerSum(at:)``).
  static func integerSum(_ column: String) -> String

  /// The sum of a double column that ``SQLAggregate`` finishes with the count, minimum and
  /// maximum; `exact` asks for the engine's exact form where it has one.
  static func doubleSum(_ column: String, exact: Bool) -> String
}

/// The values bound to a statement's placeholders, in order.
package protocol SQLBindings {
  /// No values.
  init()

  /// How many values are bound.
  var count: Int { get }

  /// Binds a value as a parameter of a field of `kind` (null binds NULL).
  mutating func append(_ value: Value, as kind: FieldKind)
}
