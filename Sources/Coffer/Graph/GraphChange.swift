/// A change a ``ModelGraph`` is about to make, or has made, to one value: what will-change and
/// did-change hooks receive.
///
/// `old` is `nil` for an insert and `new` is `nil` for a delete.
public struct GraphChange<T: Storable>: Sendable {
  /// The value's id.
  public var id: T.ID
  /// The value before the change, or `nil` when there was none.
  public var old: T?
  /// The value after the change, or `nil` when it is deleted.
  public var new: T?
  /// The stored fields whose values differ (every field for an insert or delete).
  public var changedFields: Set<String>
}

/// A will-change hook's answer.
public enum ChangeDecision: Sendable, Hashable {
  /// Let the change happen.
  case allow
  /// Refuse it, with a reason for the caller; the graph keeps the old value.
  case veto(String)
}

/// Identifies a registered hook, to remove it with ``ModelGraph/removeHook(_:)``.
public struct HookToken: Sendable, Hashable {
  let entity: String
  let number: UInt64
}
