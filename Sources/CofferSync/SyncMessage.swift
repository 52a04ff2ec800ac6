@_spi(Backend) import Coffer

/// What one replica sends another: the row states its feed recorded between two positions.
///
/// A message is idempotent: merging it twice, or merging an older one after a newer, changes
/// nothing. The receiver takes it only when it continues what it has merged from the sender
/// (``from`` at or before its position for the sender, ``to`` after it), so a lost message
/// leaves a gap that the sender fills by sending again from the receiver's position.
public struct SyncMessage: Sendable, Hashable {
  /// The replica that sent it.
  public var source: String
  /// The position in the sender's feed the message starts after (`nil`: its beginning).
  public var from: ChangePosition?
  /// The position in the sender's feed the message reaches.
  public var to: ChangePosition?
  /// The row states, in the order the sender's feed recorded them.
  public var states: [SyncRowState]
  /// For a partial receiver: the states of rows of the entities it subscribes to that lie outside
  /// its subscriptions, each field's value withheld (null) and its clock kept. A receiver that
  /// holds such a row, and knows nothing of it later than this, removes it (the row left the
  /// subscriptions).
  public var outside: [SyncRowState] = []
  /// The fingerprint of the subscriptions the sender filtered the message for (see
  /// ``SyncReplica/message(after:for:)``), `nil` when it holds every state. A replica takes only a
  /// message filtered for its own subscriptions, or one not filtered.
  public var subscriptions: String?
  /// The schema fingerprint of each entity the states name: a receiver with another schema
  /// refuses the message.
  public var schemas: [String: String]
  /// Whether the sender's feed no longer held ``from`` and the message holds every row state
  /// the sender keeps instead.
  public var isSnapshot: Bool
  /// For a snapshot, the position of the sender's feed when it last purged tombstones (see
  /// ``SyncReplica/purgeTombstones(olderThan:)``): a receiver that had not merged that far may
  /// have missed deletes the snapshot no longer holds, and refuses it.
  public var purgedAt: ChangePosition?

  /// A message.
  public init(
    source: String, from: ChangePosition?, to: ChangePosition?, states: [SyncRowState],
    schemas: [String: String],
    isSnapshot: Bool = false, purgedAt: ChangePosition? = nil
  ) {
    self.source = source
    self.from = from
    self.to = to
    self.states = states
    self.schemas = schemas
    self.isSnapshot = isSnapshot
    self.purgedAt = purgedAt
  }

  /// Whether the message reaches no further than it starts: the sender had nothing more.
  public var isEmpty: Bool { (to?.sequence ?? 0) <= (from?.sequence ?? 0) }
}

/// What a replica did with a message.
public enum SyncReceipt: Sendable, Hashable {
  /// Merged: this many row states changed this replica.
  case merged(Int)
  /// Already merged before (a duplicate or an older message): nothing done.
  case duplicate
  /// It starts after this replica's position for the sender: an earlier message was lost.
  /// Send again from ``SyncReplica/position(of:)``.
  case gap
}
