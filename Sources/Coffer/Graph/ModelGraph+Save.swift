/// The unit of work: writing the graph's changes to its store, or a scratch graph's into its
/// parent.
extension ModelGraph {
  /// Writes every change not yet saved, as one atomic batch: for a graph over a store, to the
  /// store; for a scratch graph, into its parent (the same as ``commit()``). Saves run one at a
  /// time, in the order the changes were made. Emits ``GraphEvent/saved(_:)`` per record.
  ///
  /// If the store refuses the batch, nothing is written, the changes stay in the graph and
  /// the store's ``CofferError`` is thrown.
  ///
  /// - Returns: what the batch did.
  @discardableResult
  public func save() async throws -> ChangeSummary {
    await acquireSaveTurn()
    defer { releaseSaveTurn() }
    let plan = state.withLock { state in
      state.changesSinceSave = 0
      let keys = state.dirty.sorted { (state.entries[$0]?.order ?? 0) < (state.entries[$1]?.order ?? 0) }
      var plan: [(key: ModelKey, entry: GraphEntry, adapter: EntityAdapter)] = []
      for key in keys {
        guard let entry = state.entries[key], entry.isDirty, let adapter = state.adapters[key.entity] else {
          state.dirty.remove(key)
          continue
        }
        plan.append((key, entry, adapter))
      }
      return plan
    }
    if plan.isEmpty { return ChangeSummary() }
    let summary: ChangeSummary
    switch source {
    case .store(let store):
      var changes = ChangeSet()
      for (key, entry, adapter) in plan {
        changes.layouts[key.entity] = adapter.schema
        switch (entry.stored, entry.current?.row) {
        case (nil, let row?): changes.insert(row, into: key.entity)
        case (_?, let row?): changes.update(row, in: key.entity)
        case (_?, nil): changes.delete(id: key.id, from: key.entity)
        case (nil, nil): break
        }
      }
      let echoes = state.withLock { state -> [(ModelKey, Row?)] in
        guard state.follower != nil else { return [] }
        let echoes = plan.map { ($0.key, $0.entry.current?.row) }
        for (key, row) in echoes { state.echoes[key, default: []].append(row) }
        return echoes
      }
      do {
        summary = try await store.apply(changes)
      } catch {
        state.withLock { state in
          for (key, row) in echoes {
            guard var pending = state.echoes[key], let index = pending.lastIndex(where: { $0 == row }) else {
              continue
            }
            pending.remove(at: index)
            state.echoes[key] = pending.isEmpty ? nil : pending
          }
        }
        throw error
      }
      forgetReferrers(
        ofDeleted: plan.compactMap { $0.entry.current == nil && $0.entry.stored != nil ? $0.key : nil })
    case .parent(let parent):
      let edits = plan.map {
        Edit(key: $0.key, new: $0.entry.current, requirement: .put, adapter: $0.adapter)
      }
      try await parent.perform(edits, options: .standard)
      summary = ChangeSummary(
        inserted: plan.count { $0.entry.stored == nil },
        updated: plan.count { $0.entry.stored != nil && $0.entry.current != nil },
        deleted: plan.count { $0.entry.current == nil })
    }
    state.withLock { state in
      for (key, entry, _) in plan {
        // A follower may have taken a newer row from the feed meanwhile: the store holds that.
        guard state.entries[key]?.stored == entry.stored else { continue }
        state.entries[key]?.stored = entry.current?.row
        if state.entries[key]?.isDirty != true { state.dirty.remove(key) }
      }
      state.post(plan.map { .saved($0.key) })
    }
    deliverEvents()
    return summary
  }

  /// Commits a scratch graph's changes into its parent, as one operation of the parent (one
  /// undo step there, checked by its validation and will-change hooks). The scratch graph
  /// stays usable. On a graph over a store this is ``save()``.
  public func commit() async throws { try await save() }

  /// Waits until one save at a time may run.
  private func acquireSaveTurn() async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let mayRun = state.withLock { state in
        if !state.saving {
          state.saving = true
          return true
        }
        state.saveWaiters.append(continuation)
        return false
      }
      if mayRun { continuation.resume() }
    }
  }

  /// Hands the turn to the next waiting save, resuming it outside the lock.
  private func releaseSaveTurn() {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      if state.saveWaiters.isEmpty {
        state.saving = false
        return nil
      }
      return state.saveWaiters.removeFirst()
    }
    next?.resume()
  }
}
