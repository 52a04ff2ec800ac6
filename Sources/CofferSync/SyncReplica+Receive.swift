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

    var rows: [String: Row] = [:]
    let known = try await statesWithGenesis(message.states.map { ($0.entity, $0.id) }, stored: &rows)
    try await checkPurges(message, known: known, merged: current == 0 ? nil : current)
    var extra: [ChangeSet.Operation] = []
    let changedCount = try await changes(merging: message.states, known: known, rows: rows)
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
    var rows: [String: Row] = [:]
    var changed: Bool { !states.isEmpty }
  }

  /// Merges `states` with what this replica knows of them (`known`, and `rows` as stored, by
  /// key), keeping those whose merged state differs.
  func changes(merging states: [SyncRowState], known: [String: SyncRowState], rows: [String: Row])
    async throws -> MergeChanges
  {
    var known = known
    var result = MergeChanges()
    var ids: [String: [Value]] = [:]
    for state in states {
      guard try await schema(of: state.entity) != nil else { throw unknown(state.entity) }
      if let latest = state.latest { clock?.observe(latest) }
      let mine = known[state.key]
      let merged = try mine.map { try resolved($0, state) } ?? state
      if merged == mine { continue }
      known[state.key] = merged
      result.states.append(merged)
      if rows[state.key] == nil { ids[state.entity, default: []].append(state.id) }
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
    let plan = try await mergePlan(changed, stored: changes.rows, recorded: try await recordedConflicts())
    var operations = changed.map {
      ChangeSet.Operation.upsert(entity: SyncRecords.rowsEntity, row: SyncRecords.row(for: $0))
    }
    operations += plan.rows + plan.conflicts + extra
    if !operations.isEmpty {
      try await commit(operations, preconditions: plan.preconditions)
    }
    return changes.states.count
  }
}
