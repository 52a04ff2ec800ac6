@_spi(Backend) import Coffer

/// Purging tombstones: a deleted row's sync state is kept for a retention, then removed; a
/// replica that was not synced for longer is told to start again instead of bringing deleted
/// rows back.
extension SyncReplica {
  /// Removes the sync states of rows deleted longer than `retention` ago (by their tombstone's
  /// clock reading), and remembers the latest tombstone it removed.
  ///
  /// Call it now and then on every replica with the same retention, longer than any replica
  /// stays offline: a replica that was not synced for longer may still hold rows deleted
  /// meanwhile. Such a replica is refused, with ``CofferError/Code/changesTrimmed``, by a
  /// replica whose purge it missed, and must be synced again from an empty store.
  ///
  /// - Returns: How many tombstones were removed.
  @discardableResult
  public func purgeTombstones(olderThan retention: Duration) async throws -> Int {
    try await ready()
    let records = try SyncRecords.schemas()
    let (seconds, attoseconds) = retention.components
    let cutoff = wall() - seconds * 1_000_000 - attoseconds / 1_000_000_000_000
    return try await retrying {
      try await stamp()
      let position = try await store.lastChangePosition()?.sequence ?? 0
      var removed: [ChangeSet.Operation] = []
      var expected: [ChangeSet.Precondition] = []
      var horizon = try await purgeHorizon()?.clock ?? Int64.min
      for row in try await allRecords() {
        let state = try SyncRecords.state(from: row, store: name)
        guard !state.isAlive, let deleted = state.deleted, deleted.physical < cutoff else { continue }
        removed.append(.delete(entity: SyncRecords.rowsEntity, id: row[0]))
        expected.append(.unchanged(row, in: records.rows))
        horizon = max(horizon, deleted.physical)
      }
      if removed.isEmpty { return 0 }
      try await commit(
        removed + [
          .upsert(
            entity: SyncRecords.stateEntity,
            row: SyncRecords.setting("purged", number: horizon, counter: Int64(position)))
        ],
        preconditions: expected)
      return removed.count
    }
  }

  /// The latest tombstone this replica purged (microseconds) and its feed's position then.
  func purgeHorizon() async throws -> (clock: Int64, position: UInt64)? {
    let records = try SyncRecords.schemas()
    guard let row = try await store.backend.get(entity: records.state, ids: [.string("purged")]).first,
      case .int(let clock) = row[2], case .int(let position) = row[3]
    else { return nil }
    return (clock, UInt64(max(0, position)))
  }

  /// Refuses a message that would bring back rows whose tombstones this replica purged: a live
  /// state of a row it keeps nothing of, changed before its latest purged tombstone; and a
  /// snapshot from a sender that purged tombstones this replica had not merged yet.
  func checkPurges(_ message: SyncMessage, known: [String: SyncRowState], merged: UInt64?) async throws {
    if message.isSnapshot, let purged = message.purgedAt, let merged, merged < purged.sequence {
      throw offlineTooLong(stale: "this replica", other: message.source, entity: message.states.first?.entity)
    }
    // A partial replica keeps no state of the rows outside its subscriptions: one that enters them
    // is no sign of a stale sender.
    guard partial == nil, let horizon = try await purgeHorizon()?.clock else { return }
    for state in message.states where known[state.key] == nil && state.isAlive {
      if let latest = state.latest, latest.physical <= horizon {
        throw offlineTooLong(stale: "replica \(message.source)", other: "this one", entity: state.entity)
      }
    }
  }

  private func offlineTooLong(stale: String, other: String, entity: String?) -> CofferError {
    CofferError(
      .changesTrimmed,
      "Sync refused: \(stale) was not synced for longer than the tombstone retention of \(other), which has "
        + "purged deletes it never received, so deleted rows would come back. Sync \(stale) again from an empty "
        + "store (a new replica), then go on.", store: name, entity: entity)
  }
}
