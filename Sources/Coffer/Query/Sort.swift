/// One key of a query's order.
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

  /// Ascending by a field.
  public static func ascending(_ field: String) -> Sort { Sort(field, ascending: true) }
  /// Descending by a field.
  public static func descending(_ field: String) -> Sort { Sort(field, ascending: false) }
}
