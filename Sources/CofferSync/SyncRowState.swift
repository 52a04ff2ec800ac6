import Coffer
import Foundation

/// What sync knows of one row: each field's value with the clock of the change that set it,
/// and the clock of the row's last delete (its tombstone).
///
/// Merging two states takes, field by field, the value with the later clock, and the later
/// tombstone. The merge is commutative, associative and idempotent, so replicas that have
/// merged the same states hold the same row, whatever the order and however often they
/// received them. A row is stored while some field was set after its last delete.
public struct SyncRowState: Sendable, Hashable {
  /// A field's value and the clock of the change that set it.
  public struct Stamped: Sendable, Hashable {
    /// The value.
    public var value: Value
    /// When it was set.
    public var clock: SyncClock
    /// The value and clock this change replaced on the replica that made it, `nil` when the
    /// field had none there: a replica that resolves conflicts (see ``SyncPolicy``) tells by it
    /// whether the change's writer had seen its own value.
    public var base: Base?

    /// What a change replaced.
    public struct Base: Sendable, Hashable {
      /// The value replaced.
      public var value: Value
      /// When it had been set.
      public var clock: SyncClock

      /// A replaced value.
      public init(value: Value, clock: SyncClock) {
        self.value = value
        self.clock = clock
      }
    }

    /// A stamped value.
    public init(value: Value, clock: SyncClock, base: Base? = nil) {
      self.value = value
      self.clock = clock
      self.base = base
    }

    /// Whether this change was made after its writer had seen `other` (or a change that
    /// replaced it).
    func saw(_ other: Stamped) -> Bool { base.map { $0.clock >= other.clock } ?? false }

    /// This change as the base of another.
    var asBase: Base { Base(value: value, clock: clock) }
  }

  /// The row's entity.
  public var entity: String
  /// The row's id.
  public var id: Value
  /// Each field's value and clock, by field name (the id field included).
  public var fields: [String: Stamped]
  /// The clock of the row's last delete, `nil` if it was never deleted.
  public var deleted: SyncClock?

  /// A row state.
  public init(entity: String, id: Value, fields: [String: Stamped] = [:], deleted: SyncClock? = nil) {
    self.entity = entity
    self.id = id
    self.fields = fields
    self.deleted = deleted
  }

  /// The latest clock of any field.
  public var lastSet: SyncClock? { fields.values.lazy.map(\.clock).max() }

  /// Whether the row is stored: some field was set after its last delete.
  public var isAlive: Bool {
    guard let lastSet else { return false }
    guard let deleted else { return true }
    return lastSet > deleted
  }

  /// The latest clock in the state.
  public var latest: SyncClock? {
    switch (lastSet, deleted) {
    case (let set?, let deleted?): max(set, deleted)
    case (let set?, nil): set
    case (nil, let deleted?): deleted
    case (nil, nil): nil
    }
  }

  /// The two states merged: each field's later value, the later tombstone.
  public func merged(with other: SyncRowState) -> SyncRowState {
    var result = self
    for (name, theirs) in other.fields {
      if let mine = result.fields[name] {
        if theirs.clock > mine.clock { result.fields[name] = theirs }
      } else {
        result.fields[name] = theirs
      }
    }
    if let theirs = other.deleted {
      if let mine = result.deleted {
        if theirs > mine { result.deleted = theirs }
      } else {
        result.deleted = theirs
      }
    }
    return result
  }

  /// The key of the row's state among a store's sync records.
  var key: String { Self.key(entity: entity, id: id) }

  /// The key of a row's state: its entity and its id with the id's kind.
  static func key(entity: String, id: Value) -> String {
    let idText: String
    switch id {
    case .int(let number): idText = "i" + String(number)
    case .string(let text): idText = "s" + text
    case .uuid(let uuid): idText = "u" + uuid.uuidString
    default: idText = "v" + id.description
    }
    return entity + "\u{1F}" + idText
  }
}
