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

  private func unknown(_ entity: String) -> CofferError {
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

    var known = try await syncStates(message.states.map(\.key))
    try await checkPurges(message, known: known, merged: current == 0 ? nil : current)
    var changed: [SyncRowState] = []
    var ids: [String: [Value]] = [:]
    for state in message.states {
      guard try await schema(of: state.entity) != nil else { throw unknown(state.entity) }
      if let latest = state.latest { clock?.observe(latest) }
      let mine = known[state.key]
      let merged = try mine.map { try resolved($0, state) } ?? state
      if merged == mine { continue }
      known[state.key] = merged
      changed.append(merged)
      ids[state.entity, default: []].append(state.id)
    }
    var rows: [String: Row] = [:]
    for (entity, list) in ids {
      guard let schema = schemas[entity] else { continue }
      rows.merge(try await storedRows(of: schema, ids: list)) { first, _ in first }
    }
    let plan = try await mergePlan(changed, stored: rows, recorded: try await recordedConflicts())
    var operations = changed.map {
      ChangeSet.Operation.upsert(entity: SyncRecords.rowsEntity, row: SyncRecords.row(for: $0))
    }
    operations += plan.rows + plan.conflicts
    if !changed.isEmpty || to - (stored ?? 0) >= 64 || message.isSnapshot {
      operations.append(
        .upsert(
          entity: SyncRecords.stateEntity,
          row: SyncRecords.setting(SyncRecords.peerKey(message.source), number: Int64(to))))
    }
    if !operations.isEmpty {
      try await commit(operations, preconditions: plan.preconditions)
    }
    accepted[message.source] = max(accepted[message.source] ?? 0, to)
    return .merged(changed.count)
  }
}
