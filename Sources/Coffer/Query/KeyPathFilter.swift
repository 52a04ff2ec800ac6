/// A ``Filter`` on a ``KeyPathStorable`` type, written with key paths: `\.threadID == id`.
///
/// The compiler checks that each value has the type of the property it is compared with, so
/// `\.text == 5` does not compile. Combine filters with `&&`, `||` and `!`:
///
/// ```swift
/// store.query(Message.self).filter(\.threadID == t && (\.readAt == nil || .contains(\.text, "urgent")))
/// ```
///
/// A key path that reads no stored field (a computed or transient property) makes the query
/// fail with ``CofferError/Code/invalidQuery`` when it runs.
public struct KeyPathFilter<Root: KeyPathStorable>: Sendable {
  /// The untyped filter, with stored field names.
  package let filter: Filter
  /// Why the filter cannot run, when one of its key paths reads no stored field.
  package let error: CofferError?

  /// A filter that names no fields.
  init(_ filter: Filter) {
    self.filter = filter
    self.error = nil
  }

  init(filter: Filter, error: CofferError?) {
    self.filter = filter
    self.error = error
  }

  /// The filter `make` builds on the field a key path reads.
  init(_ keyPath: PartialKeyPath<Root>, _ make: (FieldRef) -> Filter) {
    if let field = Root.field(keyPath) {
      self.init(filter: make(field), error: nil)
    } else {
      self.init(filter: .all, error: Root.notStored(keyPath))
    }
  }

  /// Both filters.
  public static func && (lhs: KeyPathFilter, rhs: KeyPathFilter) -> KeyPathFilter {
    KeyPathFilter(filter: lhs.filter && rhs.filter, error: lhs.error ?? rhs.error)
  }

  /// Either filter.
  public static func || (lhs: KeyPathFilter, rhs: KeyPathFilter) -> KeyPathFilter {
    KeyPathFilter(filter: lhs.filter || rhs.filter, error: lhs.error ?? rhs.error)
  }

  /// The negation.
  public static prefix func ! (operand: KeyPathFilter) -> KeyPathFilter {
    KeyPathFilter(filter: !operand.filter, error: operand.error)
  }
}
