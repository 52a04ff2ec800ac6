/// The change feed: every committed batch's row changes, in commit order (see <doc:RecordingChanges>).
extension Store {
  /// Turns the store's change feed on, if it is not on yet, and keeps it to `retention` as this
  /// handle commits. The store keeps the feed on from then, for every handle and process that
  /// opens it; batches committed before are not in it. What `?changes=on` in the store's URL
  /// does when it is opened.
  ///
  /// - Throws: ``CofferError/Code/unsupported`` when the backend keeps no feed.
  public func recordChanges(retention: ChangeRetention = .all) async throws {
    try await rethrowing { try await changeRecording().startRecordingChanges(retention: retention) }
  }

  /// The committed batches after a position, each once, in commit order; from the first batch
  /// the feed holds when `position` is `nil`.
  ///
  /// Without `follow` the sequence ends at the last batch committed when it starts; with it, it
  /// waits for new batches and never ends (cancel the task that reads it). Batches committed by
  /// other handles and processes are in it as this handle's are.
  ///
  /// Reading fails with ``CofferError/Code/changesTrimmed`` when a batch after `position` was
  /// trimmed, and with ``CofferError/Code/invalidConfiguration`` when the store records no feed.
  public func changes(after position: ChangePosition? = nil, follow: Bool = false) -> ChangeFeed {
    ChangeFeed(store: self, after: position?.sequence ?? 0, follow: follow)
  }

  /// The position after the last batch committed, to follow the feed from after taking a full
  /// copy: read it, copy the store while no batch commits, then follow from it. `nil` when no
  /// batch is recorded yet.
  public func lastChangePosition() async throws -> ChangePosition? {
    try await rethrowing {
      let recording = try changeRecording()
      guard let bounds = try await recording.changeFeedBounds() else {
        throw CofferError.changeFeedOff(store: backend.name)
      }
      return bounds.last == 0 ? nil : ChangePosition(sequence: bounds.last)
    }
  }

  /// Removes the batches up to `position` from the feed — those a reader at `position` has
  /// seen. Reading after an earlier position then fails with
  /// ``CofferError/Code/changesTrimmed``.
  public func trimChanges(before position: ChangePosition) async throws {
    try await rethrowing { try await changeRecording().trimChanges(.through(position.sequence)) }
  }

  /// Applies a batch of another store's feed to this store: its rows stored (added or
  /// replaced) with the values the batch gave them, its deletes made, all at once. Replaying a
  /// feed from its first batch, in order, into an empty store with the same entities gives a
  /// copy of the store; replaying a batch again on the state it left changes nothing.
  ///
  /// Each entity must be prepared here; a field this store's schema has that the batch lacks
  /// takes its default (null when it has none). References are not expanded again: the batch
  /// already holds every row the source's delete rules changed.
  public func replay(_ batch: CommittedBatch) async throws {
    // Every row the batch touched is removed first and the rows it left are stored after, all
    // in one batch: stored one by one in place, two rows that swapped a unique value would
    // clash on the way, though the batch's end state holds.
    var removals: [ChangeSet.Operation] = []
    var stores: [ChangeSet.Operation] = []
    removals.reserveCapacity(batch.changes.count)
    var layouts: [String: EntitySchema] = [:]
    for change in batch.changes {
      let schema: EntitySchema
      if let known = layouts[change.entity] {
        schema = known
      } else {
        schema = try preparedSchema(change.entity)
        layouts[change.entity] = schema
      }
      removals.append(.delete(entity: change.entity, id: change.id))
      if change.kind != .delete {
        let values = schema.fields.map { field in change.value(of: field.name) ?? field.defaultValue ?? .null
        }
        stores.append(.insert(entity: change.entity, row: Row(values)))
      }
    }
    _ = try await apply(
      ChangeSet(removals + stores, layouts: layouts), preconditionsChecked: false, enforcingReferences: false)
  }

  /// The backend as ``ChangeRecording``, or ``CofferError/Code/unsupported``.
  func changeRecording() throws -> any ChangeRecording {
    guard let recording = backend as? any ChangeRecording else {
      throw CofferError(
        .unsupported,
        "This backend keeps no change feed. Copy the store to one that does to follow its changes.",
        store: backend.name)
    }
    return recording
  }
}

/// A store's committed batches after a position, in commit order: what
/// ``Store/changes(after:follow:)`` returns.
///
/// It reads the feed a page at a time as it is iterated, so a long feed never sits in memory
/// whole.
public struct ChangeFeed: AsyncSequence, Sendable {
  /// A committed batch.
  public typealias Element = CommittedBatch

  let store: Store
  let after: UInt64
  let follow: Bool

  /// The batches, read as they are asked for.
  public func makeAsyncIterator() -> Iterator { Iterator(store: store, cursor: after, follow: follow) }

  /// Reads the feed page by page.
  public struct Iterator: AsyncIteratorProtocol {
    let store: Store
    var cursor: UInt64
    let follow: Bool
    /// Where a feed that does not follow ends: the last batch when reading began.
    var end: UInt64?
    var page: [RecordedChanges] = []
    var next = 0

    init(store: Store, cursor: UInt64, follow: Bool) {
      self.store = store
      self.cursor = cursor
      self.follow = follow
    }

    /// How many batches one read of the feed asks for.
    static let pageSize = 256
    /// How long a follower waits for a wake-up before it looks again.
    static let pollBound = Duration.seconds(1)

    /// The next batch; `nil` at the end of a feed that does not follow, or when the task was
    /// cancelled.
    public mutating func next() async throws -> CommittedBatch? {
      do {
        return try await step()
      } catch let error as CofferError {
        throw error.inStore(store.backend.name)
      }
    }

    private mutating func step() async throws -> CommittedBatch? {
      let name = store.backend.name
      while true {
        if next < page.count {
          let recorded = page[next]
          next += 1
          cursor = recorded.sequence
          return try recorded.decoded(store: name)
        }
        if Task.isCancelled { return nil }
        let recording = try store.changeRecording()
        if !follow, end == nil {
          guard let bounds = try await recording.changeFeedBounds() else {
            throw CofferError.changeFeedOff(store: name)
          }
          end = bounds.last
        }
        if let end, cursor >= end { return nil }
        page = try await recording.readChanges(after: cursor, limit: Self.pageSize)
        next = 0
        if let end { page.removeAll { $0.sequence > end } }
        if page.isEmpty {
          guard follow else { return nil }
          try await recording.waitForChanges(after: cursor, timeout: Self.pollBound)
        }
      }
    }
  }
}
