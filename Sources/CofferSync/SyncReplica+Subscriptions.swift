@_spi(Backend) import Coffer

/// Partial sync: a replica with subscriptions keeps only the rows they match (see <doc:Sync>,
/// "Partial sync").
extension SyncReplica {
  /// The rows this replica keeps, `nil` when it keeps every row.
  public var subscriptions: [SyncSubscription]? { partial?.list }

  /// Changes what this replica keeps: from now on it stores exactly the rows `subscriptions`
  /// match (`nil`: every row).
  ///
  /// Rows no subscription matches any more leave this store at once — removed here, not deleted
  /// anywhere else, their sync states forgotten — after the app's latest changes are stamped (so
  /// they are still sent). When the list differs from the one the store last kept, the replica
  /// forgets how far it has merged each peer, so the next message from each starts at the
  /// beginning of its feed and brings the rows newly matched, whole.
  ///
  /// The list is kept in the store: a new `SyncReplica` over it made with the same list goes on
  /// where this one stopped, and one made with another list changes it as this call does.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a filter that names a field its entity lacks.
  public func subscribe(_ subscriptions: [SyncSubscription]?) async throws {
    try await ready()
    partial = subscriptions.map(SyncSubscriptions.init)
    try await settleSubscriptions()
  }

  /// The fingerprint of the subscriptions messages to this replica are filtered for, `nil` for
  /// every row.
  var subscriptionFingerprint: String? { partial?.fingerprint }

  /// Whether a state lies within this replica's subscriptions (always, without subscriptions).
  func keeps(_ state: SyncRowState) throws -> Bool {
    guard partial != nil else { return true }
    guard let schema = schemas[state.entity] else { return false }
    return try partial?.keeps(state, schema: schema) ?? true
  }

  /// Brings the store to its subscriptions: stamps the app's latest changes, removes every row
  /// that lies outside them, and when the list differs from the one recorded, forgets the peers'
  /// positions and records the new list.
  func settleSubscriptions() async throws {
    let records = try SyncRecords.schemas()
    let recorded = try await store.backend.get(
      entity: records.state, ids: [.string(SyncRecords.subscriptionsKey)]
    )
    .first
    var current: String?
    if case .string(let text)? = recorded?[1] { current = text }
    if partial == nil && recorded == nil { return }
    if partial != nil {
      try await stamp()
      try await leaveOutside(try await allRecords().map { try SyncRecords.state(from: $0, store: name) })
    }
    guard current != subscriptionFingerprint else { return }
    try await retrying {
      var operations: [ChangeSet.Operation] = []
      let positions = try await store.fetchRows(
        Query(entity: records.state.name, filter: .string(field: "key", match: .hasPrefix, pattern: "peer:")))
      operations += positions.map { .delete(entity: SyncRecords.stateEntity, id: $0[0]) }
      if let subscriptionFingerprint {
        operations.append(
          .upsert(
            entity: SyncRecords.stateEntity,
            row: SyncRecords.setting(SyncRecords.subscriptionsKey, text: subscriptionFingerprint)))
      } else {
        operations.append(.delete(entity: SyncRecords.stateEntity, id: .string(SyncRecords.subscriptionsKey)))
      }
      try await commit(operations)
      accepted = [:]
    }
  }

  /// Removes from the store the rows of these states (as this replica knows them) that lie
  /// outside its subscriptions, with their sync states and conflicts, in one batch; rows that
  /// refer to them are held back or nullified as for any row that is not stored.
  func leaveOutside(_ states: [SyncRowState]) async throws {
    guard partial != nil else { return }
    var outside: [String: SyncRowState] = [:]
    for state in states where try !keeps(state) { outside[state.key] = state }
    if outside.isEmpty { return }
    try await retrying(also: [.referenceViolation, .uniqueViolation]) {
      // Read again: a merge may have changed them since.
      let known = try await syncStates(outside.keys.sorted())
      var leaving: [SyncRowState] = []
      for state in known.values where try !keeps(state) { leaving.append(state) }
      if leaving.isEmpty { return }
      try await applyLeaving(leaving)
    }
  }

  /// Writes the batch that removes these rows and their sync states.
  private func applyLeaving(_ leaving: [SyncRowState]) async throws {
    var ids: [String: [Value]] = [:]
    for state in leaving { ids[state.entity, default: []].append(state.id) }
    var rows: [String: Row] = [:]
    for (entity, list) in ids {
      guard let schema = schemas[entity] else { continue }
      rows.merge(try await storedRows(of: schema, ids: list)) { first, _ in first }
    }
    // As a row that is not alive, so the plan removes it and settles what refers to it.
    let gone = leaving.map { SyncRowState(entity: $0.entity, id: $0.id) }
    let plan = try await mergePlan(gone, stored: rows, recorded: try await recordedConflicts())
    let forget = leaving.map {
      ChangeSet.Operation.delete(entity: SyncRecords.rowsEntity, id: .string($0.key))
    }
    try await commit(forget + plan.rows + plan.conflicts, preconditions: plan.preconditions)
  }

  /// The message filtered for a receiver with `subscriptions`: the states that lie within them
  /// whole, the others of entities they cover with their values withheld (so that the receiver
  /// can tell whether a row it holds has left them), none of other entities.
  func filtered(_ message: SyncMessage, for subscriptions: [SyncSubscription]) throws -> SyncMessage {
    var filter = SyncSubscriptions(subscriptions)
    var result = message
    result.states = []
    result.outside = []
    for state in message.states {
      guard filter.covers(state.entity), let schema = schemas[state.entity] else { continue }
      if try filter.keeps(state, schema: schema) {
        result.states.append(state)
      } else {
        result.outside.append(state.withheld)
      }
    }
    result.subscriptions = filter.fingerprint
    result.schemas = fingerprints(of: result.states + result.outside)
    return result
  }
}
