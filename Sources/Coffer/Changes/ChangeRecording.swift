/// A backend that keeps a change feed: every committed batch's row changes, numbered in commit
/// order, written in the same transaction as the rows (see <doc:RecordingChanges>).
///
/// The feed is off until ``startRecordingChanges(retention:)`` turns it on, and the store keeps
/// it on from then: every handle and every process that opens the store records, so no commit
/// is missing from the feed. A backend with the feed off pays nothing for it beyond one check
/// per batch.
///
/// Guarantees the conformance suite checks (the `changes.*` checks):
/// - A batch's changes are stored in the transaction that stores its rows, numbered inside it
///   under the writer's lock, so numbers grow in commit order and a reader that has seen
///   number `n` never later finds a batch numbered below `n` that it did not see. A batch
///   that fails, or changes nothing, records nothing and takes no number.
/// - What is recorded is what the batch did, row by row, as ``ChangeCollector`` gathers it
///   from the backend's own writes: deletes and updates by query, and the rows a delete rule
///   expands to, are recorded as the rows they changed.
/// - Numbers survive closing and reopening, and are shared by every handle and process.
@_spi(Backend) public protocol ChangeRecording: StorageBackend {
  /// Turns the feed on for the store, if it is not on yet, keeping it on for every handle and
  /// process from the next batch; and trims this handle's later batches' feed to `retention`.
  /// Batches committed before are not in the feed.
  func startRecordingChanges(retention: ChangeRetention) async throws

  /// The feed's bounds: the number up to which it was trimmed and the last number given; `nil`
  /// when the feed is off.
  func changeFeedBounds() async throws -> ChangeFeedBounds?

  /// The recorded batches numbered above `sequence`, in order, at most `limit` of them.
  ///
  /// - Throws: ``CofferError/Code/changesTrimmed`` when `sequence` is below
  ///   ``ChangeFeedBounds/trimmedThrough`` (some batch after it is gone);
  ///   ``CofferError/Code/invalidConfiguration`` when the feed is off.
  func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]

  /// Removes recorded batches as `trim` says, raising ``ChangeFeedBounds/trimmedThrough`` to
  /// the last number removed. Batches applied meanwhile are unaffected.
  func trimChanges(_ trim: ChangeTrim) async throws

  /// Returns when a batch numbered above `sequence` may have been recorded — at once for a
  /// batch this process committed, within a short poll for one another process committed —
  /// or when `timeout` has passed. Returns early, without an error, when the task is
  /// cancelled.
  func waitForChanges(after sequence: UInt64, timeout: Duration) async throws
}

/// The bounds of a store's change feed.
@_spi(Backend) public struct ChangeFeedBounds: Sendable, Hashable {
  /// Every batch numbered up to this one was trimmed (0: none).
  public var trimmedThrough: UInt64
  /// The last number given to a batch (0: none yet).
  public var last: UInt64

  /// Bounds.
  public init(trimmedThrough: UInt64, last: UInt64) {
    self.trimmedThrough = trimmedThrough
    self.last = last
  }
}

/// One batch as a backend records it: its number, its commit time and its row changes encoded
/// by ``ChangeCollector/encoded()``.
@_spi(Backend) public struct RecordedChanges: Sendable, Hashable {
  /// The batch's number.
  public var sequence: UInt64
  /// When it committed, in microseconds since 1970.
  public var committedAt: Int64
  /// The row changes, as ``ChangeCollector/encoded()`` gives them.
  public var payload: [UInt8]

  /// A recorded batch.
  public init(sequence: UInt64, committedAt: Int64, payload: [UInt8]) {
    self.sequence = sequence
    self.committedAt = committedAt
    self.payload = payload
  }

  /// The batch as the feed gives it.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the payload is damaged.
  public func decoded(store: String?) throws -> CommittedBatch {
    CommittedBatch(
      position: ChangePosition(sequence: sequence),
      committedAt: Value.date(microsecondsSince1970: committedAt),
      changes: try ChangePayload.decode(payload, store: store, sequence: sequence))
  }
}

/// Which recorded batches ``ChangeRecording/trimChanges(_:)`` removes.
@_spi(Backend) public enum ChangeTrim: Sendable, Hashable {
  /// Every batch numbered up to this one (at most the last one recorded).
  case through(UInt64)
  /// Every batch committed before this time, in microseconds since 1970.
  case committedBefore(Int64)
}

extension ChangeRetention {
  /// What to trim after committing batch `sequence` at `micros`, or `nil`: only every 64th
  /// batch trims, so trimming costs little per batch.
  @_spi(Backend) public func trim(afterCommitting sequence: UInt64, at micros: Int64) -> ChangeTrim? {
    guard sequence % 64 == 0 else { return nil }
    switch self {
    case .all:
      return nil
    case .count(let count):
      let kept = UInt64(max(count, 1))
      return sequence > kept ? .through(sequence - kept) : nil
    case .age(let age):
      let (seconds, attoseconds) = age.components
      return .committedBefore(micros - seconds * 1_000_000 - attoseconds / 1_000_000_000_000)
    }
  }
}

extension CofferError {
  /// The error for reading a feed after a position whose next batches were trimmed.
  @_spi(Backend) public static func changesTrimmed(
    after sequence: UInt64, trimmedThrough: UInt64, store: String?
  )
    -> CofferError
  {
    CofferError(
      .changesTrimmed,
      "The change feed no longer holds the batches after \(ChangePosition(sequence: sequence)): it was trimmed "
        + "through \(ChangePosition(sequence: trimmedThrough)). Copy the whole store again, and follow the feed "
        + "from the position read just before the copy.",
      store: store)
  }

  /// The error for using the feed of a store that does not record one.
  @_spi(Backend) public static func changeFeedOff(store: String?) -> CofferError {
    CofferError(
      .invalidConfiguration,
      "This store does not record a change feed. Open it with ?changes=on in its URL, or call "
        + "recordChanges(retention:) first; batches committed before that are not in the feed.",
      store: store)
  }
}

/// A schema editor whose store records the change feed: the rows a migration step changes are
/// recorded, as one batch, in the step's own transaction (see <doc:RecordingChanges>).
///
/// The core gathers the rows each data step rewrites, inserts or removes (``ChangeCollector``)
/// and hands them to ``recordChanges(_:)`` before the step's transaction commits; an editor
/// numbers and stores them as its backend's batches are, so that a step and its record commit
/// together or not at all. Steps that only rename or re-index record nothing.
@_spi(Backend) public protocol ChangeRecordingEditor: SchemaEditor {
  /// Whether the store records a change feed, asked inside the step's transaction.
  func recordsChanges() throws -> Bool

  /// Records a step's row changes in the feed, inside the step's transaction; nothing when
  /// they are empty.
  func recordChanges(_ changes: ChangeCollector) throws
}
