@_spi(Backend) import Coffer

/// What a merge stores when merged rows break a reference or a unique index: the rows a change
/// touches, read with what they refer to, what refers to them and what shares their unique
/// values, until nothing more can change (see ``MergePlan``).
extension SyncReplica {
  /// The plan that stores what `changed` (rows whose states changed, as stored in `stored`) and
  /// every row with a conflict recorded so far (`recorded`, by key) give.
  func mergePlan(_ changed: [SyncRowState], stored: [String: Row], recorded: [String: SyncConflict])
    async throws
    -> MergePlan
  {
    var candidates: [String: MergeCandidate] = [:]
    for state in changed {
      guard let schema = schemas[state.entity] else { continue }
      candidates[state.key] = MergeCandidate(
        state: state, schema: schema, row: stored[state.key], conflict: recorded[state.key])
    }
    // Rows with the implicit genesis state that the plan may change: their states are written.
    var implicit: Set<String> = []
    _ = try await include(
      recorded.values.map { (entity: $0.entity, id: $0.id) }, in: &candidates, conflicts: recorded,
      implicit: &implicit)
    var present: [String: Bool] = [:]
    var preconditions: [ChangeSet.Precondition] = []
    var claimsAsked: Set<String> = []
    var referrersAsked: Set<String> = []
    while true {
      try await lookUpTargets(of: candidates, present: &present, preconditions: &preconditions)
      let outcomes = MergePlan.outcomes(candidates, present: present)
      var wanted: [(entity: String, id: Value)] = []
      for key in candidates.keys.sorted() {
        guard let candidate = candidates[key] else { continue }
        let schema = candidate.schema
        // Another stored row with the same unique values competes for them.
        for index in schema.uniqueIndexes where candidate.state.isAlive {
          guard let values = candidate.claim(index) else { continue }
          if let row = candidate.row,
            index.fields.compactMap({ schema.position(of: $0) }).map({ row[$0] }) == values
          {
            continue
          }
          guard claimsAsked.insert(MergePlan.claimKey(schema.name, index, values)).inserted else { continue }
          let filter = Filter.and(
            zip(index.fields, values).map { .compare(field: $0, op: .equal, value: $1) })
          for row in try await store.fetchRows(Query(entity: schema.name, filter: filter)) {
            wanted.append((schema.name, row[schema.idPosition]))
          }
        }
        // A stored row that will not be: the rows that refer to it change too.
        let kept = candidate.state.isAlive && (outcomes[key] ?? nil)?.isHeldBack != true
        guard candidate.row != nil, !kept, referrersAsked.insert(key).inserted else { continue }
        wanted += try await referrers(of: candidate)
      }
      if !(try await include(wanted, in: &candidates, conflicts: recorded, implicit: &implicit)) {
        var plan = MergePlan.make(candidates, outcomes: outcomes, order: referenceOrder())
        plan.preconditions += preconditions
        // A row held back, nullified or deleted here keeps its state, also one it had implicitly.
        for key in implicit.sorted() {
          guard let candidate = candidates[key] else { continue }
          plan.conflicts.append(
            .upsert(entity: SyncRecords.rowsEntity, row: SyncRecords.row(for: candidate.state)))
        }
        return plan
      }
    }
  }

  /// The stored rows that refer to a row by an enforced reference.
  private func referrers(of candidate: MergeCandidate) async throws -> [(entity: String, id: Value)] {
    var found: [(entity: String, id: Value)] = []
    for schema in schemas.values.sorted(by: { $0.name < $1.name }) {
      for reference in schema.references
      where reference.entity == candidate.schema.name && reference.isEnforced {
        let filter = Filter.compare(field: reference.field, op: .equal, value: candidate.state.id)
        for row in try await store.fetchRows(Query(entity: schema.name, filter: filter)) {
          found.append((schema.name, row[schema.idPosition]))
        }
      }
    }
    return found
  }

  /// Adds rows to the candidates with their states, stored rows and conflicts; whether any was
  /// new. A stored row without a sync state yet is left as it is when the app wrote it after the
  /// last stamping, and has its implicit state when the replica has a genesis stamp.
  private func include(
    _ wanted: [(entity: String, id: Value)], in candidates: inout [String: MergeCandidate],
    conflicts: [String: SyncConflict], implicit: inout Set<String>
  ) async throws -> Bool {
    var fresh: [String: (entity: String, id: Value)] = [:]
    for row in wanted {
      let key = SyncRowState.key(entity: row.entity, id: row.id)
      if candidates[key] == nil { fresh[key] = row }
    }
    if fresh.isEmpty { return false }
    var read: [String: Row] = [:]
    let recorded = try await syncStates(fresh.keys.sorted())
    var states = recorded
    if genesis != nil {
      states = try await statesWithGenesis(fresh.keys.sorted().compactMap { fresh[$0] }, stored: &read)
      implicit.formUnion(states.keys.filter { recorded[$0] == nil })
    }
    var ids: [String: [Value]] = [:]
    for (key, row) in fresh where states[key] != nil { ids[row.entity, default: []].append(row.id) }
    var added = false
    for (entity, list) in ids {
      guard let schema = schemas[entity] else { continue }
      let rows = try await storedRows(of: schema, ids: list)
      for id in list {
        let key = SyncRowState.key(entity: entity, id: id)
        guard let state = states[key] else { continue }
        candidates[key] = MergeCandidate(
          state: state, schema: schema, row: rows[key], conflict: conflicts[key])
        added = true
      }
    }
    return added
  }

  /// Reads whether the rows the candidates refer to, outside the candidates, are stored; a
  /// reference the stored row already holds needs no look-up (the store keeps it whole).
  private func lookUpTargets(
    of candidates: [String: MergeCandidate], present: inout [String: Bool],
    preconditions: inout [ChangeSet.Precondition]
  ) async throws {
    var ids: [String: [Value]] = [:]
    for candidate in candidates.values where candidate.state.isAlive {
      for reference in candidate.schema.references {
        guard let target = MergePlan.target(reference, of: candidate), candidates[target] == nil,
          present[target] == nil, let value = candidate.state.fields[reference.field]?.value
        else { continue }
        if let row = candidate.row, let position = candidate.schema.position(of: reference.field),
          row[position] == value
        {
          continue
        }
        present[target] = false
        ids[reference.entity, default: []].append(value)
      }
    }
    for (entity, list) in ids {
      guard let schema = schemas[entity] else { continue }
      let rows = try await storedRows(of: schema, ids: list)
      for id in list {
        let key = SyncRowState.key(entity: entity, id: id)
        if let row = rows[key] {
          present[key] = true
          preconditions.append(.unchanged(row, in: schema))
        } else {
          preconditions.append(.absent(id, in: schema))
        }
      }
    }
  }
}
