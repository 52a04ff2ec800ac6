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
  /// Whether the key orders by how well rows match the query's
  /// ``Filter/matches(field:query:)`` filters on ``field`` (their BM25 score, see
  /// <doc:Searching>) rather than by the field's value. Descending puts the best match first.
  package var byRelevance: Bool = false

  /// A sort key.
  public init(_ field: String, ascending: Bool = true) {
    self.field = field
    self.ascending = ascending
  }

  /// The best matches of the query's `matches` filters on `field` first (BM25, ties by id).
  public static func relevance(_ field: String) -> Sort {
    var key = Sort(field, ascending: false)
    key.byRelevance = true
    return key
  }
}
