@_spi(Backend) import Coffer

/// Receiving: another replica's row states merged into this one.
extension SyncReplica {
  /// Merges a message from another replica: each row state merged with this replica's, and
  /// each row whose merged state differs stored (or deleted) in the same batch as its new
  /// state and this replica's new position for the sender — so a message is applied once, also
  /// when a process is killed halfway, and a message received again changes nothing.
  ///
  /// The app's latest changes are stamped first, and the batch expects every row it writes to be
  /// as it was read: a row the app changes meanwhile is stamped, and merged again.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` when an entity of the message has other fields
  ///   here; ``CofferError/Code/unknownEntity`` when this replica lacks one (see ``adopt(_:)``).
  public func receive(_ message: SyncMessage) async throws -> SyncReceipt {
    if let served {
      try checkMayWrite(try await servedReplica(served))
      return try await served.syncReceive(message)
    }
    try await ready()
    if message.source == identity { return .duplicate }
    for (entity, fingerprint) in message.schemas.sorted(by: { $0.key < $1.key }) {
      guard let mine = try await schema(of: entity) else { throw unknown(entity) }
      if SyncRecords.fingerprint(mine) != fingerprint {
        throw Self.schemaDiffers(entity: entity, store: name)
      }
    }
    // The app may write a row between the plan's reads and its batch: the batch then breaks a
    // reference or a unique index, or finds a row changed, and the merge starts again.
    return try await retrying(also: [.referenceViolation, .uniqueViolation]) { try await merge(message) }
  }

  /// The position of a peer's feed this replica has merged through, `nil` before its first
  /// message.
  public func position(of peer: String) async throws -> ChangePosition? {
    if let served { return try await served.syncPosition(of: peer) }
    try await ready()
    let stored = try await storedPosition(of: peer) ?? 0
    let sequence = max(stored, accepted[peer] ?? 0)
    return sequence == 0 ? nil : ChangePosition(sequence: sequence)
  }

  func storedPosition(of peer: String) async throws -> UInt64? {
    let records = try SyncRecords.schemas()
    guard
      let row = try await store.backend.get(entity: records.state, ids: [.string(SyncRecords.peerKey(peer))])
        .first,
      case .int(let number) = row[2]
    else { return nil }
    return UInt64(max(0, number))
  }

  func unknown(_ entity: String) -> CofferError {
    CofferError(
      .unknownEntity,
      "Entity '\(entity)' is synced by the other replica but not prepared in this one. Prepare it (or let the "
        + "Synchronizer adopt the other replica's schema), then sync again.", store: name, entity: entity)
  }

  private func merge(_ message: SyncMessage) async throws -> SyncReceipt {
    try await stamp()
    let stored = try await storedPosition(of: message.source)
    let current = max(stored ?? 0, accepted[message.source] ?? 0)
    let from = message.from?.sequence ?? 0
    let to = message.to?.sequence ?? 0
    if to <= current { return .duplicate }
    if from > current && !message.isSnapshot { return .gap }
    // Filtered for other subscriptions (made before they changed): the sender sends again, for these.
    if let filter = message.subscriptions, filter != subscriptionFingerprint { return .gap }

    var rows: [String: Row] = [:]
    let known = try await statesWithGenesis(
      (message.states + message.outside).map { ($0.entity, $0.id) }, stored: &rows)
    try await checkPurges(message, known: known, merged: current == 0 ? nil : current)
    var extra: [ChangeSet.Operation] = []
    let changedCount = try await changes(
      merging: message.states, outside: message.outside, known: known, rows: rows)
    if changedCount.changed || to - (stored ?? 0) >= 64 || message.isSnapshot {
      extra.append(
        .upsert(
          entity: SyncRecords.stateEntity,
          row: SyncRecords.setting(SyncRecords.peerKey(message.source), number: Int64(to))))
    }
    let count = try await applyMerge(changedCount, extra: extra)
    accepted[message.source] = max(accepted[message.source] ?? 0, to)
    return .merged(count)
  }

  /// What merging some states changes: the merged states that differ from what this replica
  /// knew, and the rows they touch as stored now.
  struct MergeChanges {
    var states: [SyncRowState] = []
    /// Rows this replica holds whose merged state lies outside its subscriptions: they leave it.
    var leaving: [SyncRowState] = []
    var rows: [String: Row] = [:]
    var changed: Bool { !states.isEmpty || !leaving.isEmpty }
  }

  /// Merges `states` with what this replica knows of them (`known`, and `rows` as stored, by
  /// key), keeping those whose merged state differs; on a partial replica, a row whose merged
  /// state lies outside its subscriptions, or that `outside` says left them later than anything
  /// this replica knows of it, leaves instead, and a state outside them of a row it does not hold
  /// is not kept.
  func changes(
    merging states: [SyncRowState], outside: [SyncRowState] = [], known: [String: SyncRowState],
    rows: [String: Row]
  )
    async throws -> MergeChanges
  {
    var known = known
    var result = MergeChanges()
    var ids: [String: [Value]] = [:]
    for state in states {
      guard try await schema(of: state.entity) != nil else { throw unknown(state.entity) }
      if partial?.covers(state.entity) == false { continue }
      if let latest = state.latest { clock?.observe(latest) }
      let mine = known[state.key]
      let merged = try mine.map { try resolved($0, state) } ?? state
      if merged == mine { continue }
      if try !keeps(merged) {
        if mine != nil {
          known[state.key] = nil
          result.states.removeAll { $0.key == state.key }
          result.leaving.append(merged)
          if rows[state.key] == nil { ids[state.entity, default: []].append(state.id) }
        }
        continue
      }
      known[state.key] = merged
      if !result.leaving.isEmpty { result.leaving.removeAll { $0.key == state.key } }
      result.states.append(merged)
      if rows[state.key] == nil { ids[state.entity, default: []].append(state.id) }
    }
    for note in outside where partial != nil {
      guard let mine = known[note.key], mine.isCovered(by: note) else { continue }
      known[note.key] = nil
      result.leaving.append(mine)
      if rows[note.key] == nil { ids[note.entity, default: []].append(note.id) }
    }
    result.rows = rows
    for (entity, list) in ids {
      guard let schema = schemas[entity] else { continue }
      result.rows.merge(try await storedRows(of: schema, ids: list)) { first, _ in first }
    }
    return result
  }

  /// Writes merged states, the rows they give and `extra` in one batch; how many states it wrote.
  func applyMerge(_ changes: MergeChanges, extra: [ChangeSet.Operation]) async throws -> Int {
    // A state merged twice in one message keeps its last merge.
    var latest: [String: Int] = [:]
    for (index, state) in changes.states.enumerated() { latest[state.key] = index }
    let changed = changes.states.enumerated().filter { latest[$0.element.key] == $0.offset }.map(\.element)
    // A row that leaves is planned as one that is not alive: removed, what refers to it settled.
    let leaving = changes.leaving
    let gone = leaving.map { SyncRowState(entity: $0.entity, id: $0.id) }
    let plan = try await mergePlan(
      changed + gone, stored: changes.rows, recorded: try await recordedConflicts())
    var operations = changed.map {
      ChangeSet.Operation.upsert(entity: SyncRecords.rowsEntity, row: SyncRecords.row(for: $0))
    }
    operations += leaving.map { .delete(entity: SyncRecords.rowsEntity, id: .string($0.key)) }
    operations += plan.rows + plan.conflicts + extra
    if !operations.isEmpty {
      try await commit(operations, preconditions: plan.preconditions)
    }
    return changes.states.count + leaving.count
  }
}
