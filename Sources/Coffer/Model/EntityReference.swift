/// A field that holds the id of another entity's row, and what happens to the rows that refer
/// to a row when it is deleted.
///
/// A ``Storable`` type lists its references in ``Storable/references`` (or marks the field
/// with `@Reference` under `@Storable`); a runtime schema passes them to
/// ``EntitySchema/init(name:fields:idField:indexes:references:)``.
///
/// ```swift
/// struct ChatMessage: Storable {
///   var id: Int64
///   var threadID: Int64
///   var text: String
///
///   static var references: [EntityReference] {
///     [.to(ChatThread.self, by: "threadID", onDelete: .cascade)]
///   }
/// }
/// ```
///
/// Every write through a ``Store`` keeps references whole, inside the same atomic batch: a
/// row that refers to an id no row has is refused (unless the rule is ``DeleteRule/none``),
/// and deleting a referenced row applies the rule to the rows that refer to it.
public struct EntityReference: Sendable, Hashable, Codable {
  /// The referring field of this entity (its stored name). A null never refers to anything.
  public var field: String
  /// The name of the entity whose id the field holds.
  public var entity: String
  /// What deleting a referenced row does to the rows that refer to it.
  public var onDelete: DeleteRule

  /// A reference from `field` to the ids of `entity`.
  public init(field: String, entity: String, onDelete: DeleteRule = .deny) {
    self.field = field
    self.entity = entity
    self.onDelete = onDelete
  }

  /// A reference from `field` to the ids of a ``Storable`` type's entity.
  public static func to<T: Storable>(_ type: T.Type, by field: String, onDelete: DeleteRule = .deny)
    -> EntityReference
  {
    EntityReference(field: field, entity: T.entityName, onDelete: onDelete)
  }

  /// Whether a write must find the referenced row: every rule but ``DeleteRule/none``.
  public var isEnforced: Bool { onDelete != .none }
}

/// What deleting a row does to the rows whose ``EntityReference`` holds its id.
///
/// The rule runs in the batch that deletes the row, so no batch leaves a row referring to a
/// missing one (except under ``none``).
public enum DeleteRule: String, Sendable, Hashable, Codable, CaseIterable {
  /// Delete the referring rows too (and what refers to them, by their own rules).
  case cascade
  /// Set the referring field to null; the field must be optional.
  case nullify
  /// Refuse to delete a row while any row refers to it: the batch fails with
  /// ``CofferError/Code/referenceViolation`` and applies nothing.
  case deny
  /// Do nothing and check nothing: the field may hold any id, as a plain field would.
  case none
}
