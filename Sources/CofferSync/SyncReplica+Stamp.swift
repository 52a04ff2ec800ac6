@_spi(Backend) import Coffer

/// Stamping: the app's own changes, read from the store's feed, become row states with clock
/// readings.
extension SyncReplica {
  /// Stamps the app's changes this replica's feed recorded since the last time: each field whose
  /// value differs from the row's sync state gets a new clock reading, a row that is gone gets a
  /// tombstone. A change sync itself applied equals the state written with it, so it is never
  /// stamped again (no echo).
  ///
  /// - Returns: How many rows were stamped.
  ///
  /// On a partial replica, a row the app wrote outside the subscriptions is stamped (and so sent
  /// to the peers like any change), then leaves this store in a batch of its own.
  @discardableResult
  public func stamp() async throws -> Int {
    try await ready()
    let count = try await retrying(also: [.referenceViolation, .uniqueViolation]) { try await stampFeed() }
    if !stampedSinceLeaving.isEmpty {
      let stamped = stampedSinceLeaving
      stampedSinceLeaving = []
      try await leaveOutside(stamped)
    }
    return count
  }

  private func stampFeed() async throws -> Int {
    var stamped = 0
    while true {
      let start = stampedThrough ?? 0
      var keys: [(entity: String, id: Value)] = []
      var seen: Set<String> = []
      // Whether each row was stored before the first change of this window (only needed with a
      // genesis stamp: such a row without a sync state had the implicit one).
      var existed: [String: Bool] = [:]
      var end = start
      var batches = 0
      var skipped = 0
      var reading = true
      while reading {
        reading = false
        // Bootstrap batches this actor wrote are skipped unread.
        while let next = ownBatches[end] {
          end = next
          batches += 1
          skipped += 1
        }
        for try await batch in store.changes(after: ChangePosition(sequence: end)) {
          end = batch.position.sequence
          batches += 1
          // A bootstrap's rows are sync's own writes, with the genesis stamp: not the app's.
          let bootstrap = SyncRecords.isBootstrapRows(batch.changes)
          for change in batch.changes where !SyncRecords.isInternal(change.entity) {
            let key = SyncRowState.key(entity: change.entity, id: change.id)
            if existed[key] == nil { existed[key] = bootstrap || change.kind != .insert }
            if !bootstrap, seen.insert(key).inserted { keys.append((change.entity, change.id)) }
          }
          if keys.count >= messageLimit || batches >= 1024 { break }
          if ownBatches[end] != nil {
            reading = true
            break
          }
        }
      }
      // A short stretch with nothing to stamp is not worth a write, unless it skipped batches
      // (which only this actor knows it may skip).
      if batches == 0 || (keys.isEmpty && batches < 64 && skipped == 0) { return stamped }
      let (operations, count, preconditions) = try await restamp(keys, existed: existed)
      let records = try SyncRecords.schemas()
      let previous = SyncRecords.setting("stamped", number: Int64(start))
      try await commit(
        operations + [
          .upsert(entity: SyncRecords.stateEntity, row: SyncRecords.setting("stamped", number: Int64(end)))
        ],
        preconditions: [.unchanged(previous, in: records.state)] + preconditions)
      stampedThrough = end
      ownBatches = ownBatches.filter { $0.key >= end }
      if partial != nil { stampedSinceLeaving += try stampedStates(operations) }
      stamped += count
      if keys.count < messageLimit && batches < 1024 { return stamped }
    }
  }

  /// The record writes that stamp these rows as they are stored now; while some rows have a
  /// conflict, also the writes that settle them again (an app's change may end a conflict or
  /// start one), with what those writes expect.
  ///
  /// With a genesis stamp, a row without a sync state that `existed` before its first change here
  /// had the implicit one, whose values are gone: every field of it is stamped, and if it is
  /// gone now it gets a tombstone.
  func restamp(_ keys: [(entity: String, id: Value)], existed: [String: Bool] = [:]) async throws
    -> ([ChangeSet.Operation], Int, [ChangeSet.Precondition])
  {
    var byEntity: [String: [Value]] = [:]
    var order: [String] = []
    for key in keys {
      if byEntity[key.entity] == nil { order.append(key.entity) }
      byEntity[key.entity, default: []].append(key.id)
    }
    let known = try await syncStates(keys.map { SyncRowState.key(entity: $0.entity, id: $0.id) })
    let recorded = try await recordedConflicts()
    var stamped: [SyncRowState] = []
    var rows: [String: Row] = [:]
    for entity in order {
      guard let schema = try await schema(of: entity), let ids = byEntity[entity] else { continue }
      let current = try await storedRows(of: schema, ids: ids)
      rows.merge(current) { first, _ in first }
      for id in ids {
        let key = SyncRowState.key(entity: entity, id: id)
        if known[key] == nil, genesis != nil, existed[key] == true, current[key] == nil {
          // A row with the implicit state, deleted: a tombstone (its values are gone with it). One
          // still stored is stamped below as a new row, every field.
          stamped.append(SyncRowState(entity: entity, id: id, deleted: try tick()))
          continue
        }
        if let state = try restamped(
          current[key], schema: schema, id: id, old: known[key], conflict: recorded[key])
        {
          stamped.append(state)
        }
      }
    }
    var operations = stamped.map {
      ChangeSet.Operation.upsert(entity: SyncRecords.rowsEntity, row: SyncRecords.row(for: $0))
    }
    if recorded.isEmpty || stamped.isEmpty { return (operations, stamped.count, []) }
    let plan = try await mergePlan(stamped, stored: rows, recorded: recorded)
    operations += plan.rows + plan.conflicts
    return (operations, stamped.count, plan.preconditions)
  }

  /// The row's new state if it differs from what sync knows of it, `nil` if it does not.
  ///
  /// The row is compared with what the app saw: a row held back by a `conflict` was not there
  /// (writing it again sets every field; its absence is no delete), and a field stored as null
  /// for a missing reference was null.
  func restamped(
    _ row: Row?, schema: EntitySchema, id: Value, old: SyncRowState?, conflict: SyncConflict? = nil
  )
    throws -> SyncRowState?
  {
    let heldBack = conflict?.isHeldBack ?? false
    if let row {
      var state = old ?? SyncRowState(entity: schema.name, id: id)
      let wasAlive = (old?.isAlive ?? false) && !heldBack
      let nulled = conflict?.nulledFields ?? []
      var changed: [Int] = []
      for (position, field) in schema.fields.enumerated() {
        let seen = nulled.contains(field.name) ? Value.null : state.fields[field.name]?.value
        if !wasAlive || seen != row[position] { changed.append(position) }
      }
      if changed.isEmpty { return nil }
      let reading = try tick()
      for position in changed {
        let name = schema.fields[position].name
        state.fields[name] = SyncRowState.Stamped(
          value: row[position], clock: reading, base: state.fields[name]?.asBase)
      }
      return state
    }
    guard var state = old, state.isAlive, !heldBack else { return nil }
    state.deleted = try tick()
    return state
  }

  /// Stamps every row the store holds, the first time it takes part in sync; then the feed is
  /// stamped from the position it had before.
  func stampExisting() async throws {
    let records = try SyncRecords.schemas()
    let before = try await store.lastChangePosition()?.sequence ?? 0
    for schema in schemas.values.sorted(by: { $0.name < $1.name }) {
      try await pagesByID(of: schema, pageSize: messageLimit) { page in
        try await retrying {
          let ids = page.map { $0[schema.idPosition] }
          let known = try await syncStates(ids.map { SyncRowState.key(entity: schema.name, id: $0) })
          var operations: [ChangeSet.Operation] = []
          for row in page {
            let id = row[schema.idPosition]
            if let state = try restamped(
              row, schema: schema, id: id, old: known[SyncRowState.key(entity: schema.name, id: id)])
            {
              operations.append(.upsert(entity: SyncRecords.rowsEntity, row: SyncRecords.row(for: state)))
            }
          }
          if !operations.isEmpty { try await commit(operations) }
        }
      }
    }
    try await retrying {
      // Another process may have finished the first stamping meanwhile.
      if stampedThrough != nil { return }
      try await commit(
        [
          .upsert(entity: SyncRecords.stateEntity, row: SyncRecords.setting("stamped", number: Int64(before)))
        ],
        preconditions: [.absent(.string("stamped"), in: records.state)])
      stampedThrough = before
    }
  }

  /// The row states among a batch's writes.
  private func stampedStates(_ operations: [ChangeSet.Operation]) throws -> [SyncRowState] {
    try operations.compactMap { operation in
      guard case .upsert(let entity, let row) = operation, entity == SyncRecords.rowsEntity else {
        return nil
      }
      return try SyncRecords.state(from: row, store: name)
    }
  }
}
