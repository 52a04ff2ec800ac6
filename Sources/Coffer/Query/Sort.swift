/// One key of a query's order, by stored field name: `Sort("date", ascending: false)`. On a
/// ``KeyPathStorable`` type, sort by key path instead: `sort(\.date, .descending)`
/// (``Direction``).
///
/// Ascending order puts nulls first; descending puts them last. Whatever the keys, ties are
/// broken by id ascending, so an order is always total and pages never overlap or skip.
public struct Sort: Sendable, Hashable {
  /// The field sorted by.
  public var field: String
  /// Whether smaller values come first.
  public var ascending: Bool

  /// A sort key.
  public init(_ field: String, ascending: Bool = true) {
    self.field = field
    self.ascending = ascending
  }
}
