import Foundation

/// A place in a store's change feed: just after one committed batch.
///
/// Positions are opaque: compare them, keep them (`Codable`, or their text form
/// ``description``), and hand one back to ``Store/changes(after:follow:)`` to go on after it —
/// also after the store was closed and opened again, or in another process. A position from
/// one store means nothing in another.
///
/// ```swift
/// var last: ChangePosition? = savedPosition
/// for try await batch in store.changes(after: last) {
///   try await replica.replay(batch)
///   last = batch.position
/// }
/// ```
public struct ChangePosition: Sendable, Hashable, Comparable, Codable, LosslessStringConvertible {
  /// The number of the batch the position is after; batches are numbered from 1 in commit
  /// order, each number used once.
  @_spi(Backend) public let sequence: UInt64

  /// The position just after batch `sequence`.
  @_spi(Backend) public init(sequence: UInt64) { self.sequence = sequence }

  /// The position's text form, `c1.` followed by a number: what ``description`` gives.
  public init?(_ description: String) {
    guard description.hasPrefix(Self.prefix), let sequence = UInt64(description.dropFirst(Self.prefix.count))
    else { return nil }
    self.sequence = sequence
  }

  /// The position as text, for logs, command lines and files.
  public var description: String { Self.prefix + String(sequence) }

  private static let prefix = "c1."

  /// Orders positions as their batches committed.
  public static func < (lhs: ChangePosition, rhs: ChangePosition) -> Bool { lhs.sequence < rhs.sequence }

  /// Decodes the text form.
  public init(from decoder: any Decoder) throws {
    let text = try decoder.singleValueContainer().decode(String.self)
    guard let position = ChangePosition(text) else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: decoder.codingPath, debugDescription: "Not a change position (expected c1.NUMBER)."))
    }
    self = position
  }

  /// Encodes the text form.
  public func encode(to encoder: any Encoder) throws {
    var container = encoder.singleValueContainer()
    try container.encode(description)
  }
}

/// One committed batch as the change feed gives it: where it is, when it committed, and every
/// row it changed.
public struct CommittedBatch: Sendable, Hashable {
  /// The position just after this batch: pass it to ``Store/changes(after:follow:)`` to go on.
  public let position: ChangePosition
  /// When the batch committed, by the clock of the machine that committed it, to the
  /// microsecond.
  public let committedAt: Date
  /// Each row the batch changed, once, in the order the batch first changed it.
  public let changes: [RowChange]

  /// A batch of the feed.
  @_spi(Backend) public init(position: ChangePosition, committedAt: Date, changes: [RowChange]) {
    self.position = position
    self.committedAt = committedAt
    self.changes = changes
  }
}

/// What a committed batch did to one row: its entity and id, whether it was added, replaced or
/// removed, and the values it holds afterwards.
///
/// A batch that changed a row several times gives it once, with its effect: added and then
/// replaced is an insert with the last values; added and then removed is not there at all.
public struct RowChange: Sendable, Hashable {
  /// What happened to the row.
  public enum Kind: String, Sendable, Hashable, Codable {
    /// The row was added.
    case insert
    /// The row was replaced (by an update, an upsert, an update by query, a delete rule that
    /// sets a field to null).
    case update
    /// The row was removed (by a delete, a delete by query, a cascade).
    case delete
  }

  /// The entity's name.
  public let entity: String
  /// The row's id.
  public let id: Value
  /// What happened to the row.
  public let kind: Kind
  /// The entity's field names when the batch committed, in the order of ``values``.
  public let fields: [String]
  /// The row's values after the batch, one per name in ``fields``; empty for a delete.
  public let values: [Value]

  /// A row change.
  @_spi(Backend) public init(entity: String, id: Value, kind: Kind, fields: [String], values: [Value]) {
    self.entity = entity
    self.id = id
    self.kind = kind
    self.fields = fields
    self.values = values
  }

  /// The value of a field after the change, or `nil` when the row has no such field (or was
  /// deleted).
  public func value(of field: String) -> Value? {
    guard let position = fields.firstIndex(of: field), position < values.count else { return nil }
    return values[position]
  }
}

/// How much of its change feed a store keeps. Older batches are trimmed as new ones commit;
/// reading from a trimmed position fails with ``CofferError/Code/changesTrimmed``.
public enum ChangeRetention: Sendable, Hashable {
  /// Every batch, until ``Store/trimChanges(before:)`` trims it.
  case all
  /// The last `count` batches.
  case count(Int)
  /// The batches committed within this long before the newest.
  case age(Duration)

  /// Parses the URL option's value: `all`, a number of batches (`10000`), or an age in
  /// seconds, minutes, hours or days (`90s`, `30m`, `12h`, `7d`).
  @_spi(Backend) public init?(urlOption text: String) {
    if text == "all" {
      self = .all
      return
    }
    if let count = Int(text), count > 0 {
      self = .count(count)
      return
    }
    guard let unit = text.last, let amount = Int(text.dropLast()), amount > 0 else { return nil }
    let seconds: Int
    switch unit {
    case "s": seconds = amount
    case "m": seconds = amount * 60
    case "h": seconds = amount * 3600
    case "d": seconds = amount * 86400
    default: return nil
    }
    self = .age(.seconds(seconds))
  }
}
