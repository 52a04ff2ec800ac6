/// A graph that follows its store's change feed: values changed elsewhere are refreshed in it.
extension ModelGraph {
  /// Keeps the values this graph holds in step with its store, from now until
  /// ``stopFollowingStore()`` or until the graph is released: a batch committed through another
  /// `Store`, another process or this graph's store directly refreshes each value it changed
  /// that the graph holds, and the graph emits the same events as for its own changes
  /// (``GraphEvent/inserted(_:)``, ``GraphEvent/updated(_:fields:)`` with the fields that
  /// differ, ``GraphEvent/deleted(_:)``), to whole-model and per-field streams alike.
  ///
  /// ```swift
  /// let graph = ModelGraph(store: store)
  /// try await graph.followStore()
  /// for await event in graph.events(for: Note.self, field: "title") { refresh(event.key) }
  /// ```
  ///
  /// The store must record a change feed (`?changes=on`, see <doc:RecordingChanges>). Values the graph
  /// already holds are read again when following starts, so none is older than the store.
  /// Refreshing is not a change made through the graph: it records no undo step, runs no
  /// will-change or did-change hook and no validation, and saves nothing. The graph's own saves
  /// come back through the feed and change nothing.
  ///
  /// A value the graph has unsaved changes to is never overwritten silently. When a batch
  /// elsewhere changes it, the graph keeps its own changes and takes the rest:
  /// - fields the graph changed keep the graph's values; other fields take the store's new
  ///   values (and emit ``GraphEvent/updated(_:fields:)`` for those);
  /// - fields changed both here and elsewhere, to different values, are a clash: the graph's
  ///   values stay, and ``GraphEvent/conflicted(_:fields:)`` names those fields;
  /// - a value deleted elsewhere and changed here, or changed elsewhere and deleted here, or
  ///   inserted both here and elsewhere, is a clash of every field that differs: the graph's
  ///   version stays (saving it stores it again, deletes it, or replaces the other).
  ///
  /// The next ``save()`` then writes the graph's values over the store's, as any save does.
  /// To take the store's version instead, ``remove(_:id:)`` the value and read it again.
  ///
  /// - Throws: ``CofferError/Code/unsupported`` for a scratch graph (it follows its parent) or a
  ///   backend without a feed; ``CofferError/Code/invalidConfiguration`` when the store records
  ///   none.
  public func followStore() async throws {
    guard case .store(let store) = source else {
      throw CofferError(
        .unsupported,
        "A scratch graph reads its parent graph, not a store: follow the store with the root graph.",
        store: store.backend.name)
    }
    if isFollowingStore { return }
    let start = try await store.lastChangePosition()
    try await refreshHeldValues()
    let follower = Task { [weak self, store] in
      var position = start
      while !Task.isCancelled {
        do {
          for try await batch in store.changes(after: position, follow: true) {
            guard let self else { return }
            self.absorb(batch.changes)
            position = batch.position
          }
          return
        } catch let error as CofferError where error.code == .changesTrimmed {
          // Batches were trimmed before this graph read them: start again from the end, and read
          // every held value again.
          guard let self, let end = try? await store.lastChangePosition() else { return }
          position = end
          try? await self.refreshHeldValues()
        } catch {
          return
        }
      }
    }
    let previous = state.withLock { state -> Task<Void, Never>? in
      defer { state.follower = follower }
      return state.follower
    }
    previous?.cancel()
  }

  /// Stops following the store (see ``followStore()``); the values the graph holds stay.
  public func stopFollowingStore() {
    let follower = state.withLock { state -> Task<Void, Never>? in
      defer { state.follower = nil }
      return state.follower
    }
    follower?.cancel()
  }

  /// Whether the graph follows its store (see ``followStore()``).
  public var isFollowingStore: Bool { state.withLock { $0.follower != nil } }

  /// Reads every value the graph holds again from the store, and takes the store's version as
  /// a batch from the feed would be taken.
  private func refreshHeldValues() async throws {
    let held = state.withLock { state in
      Dictionary(grouping: state.entries.keys.filter { state.adapters[$0.entity] != nil }, by: \.entity)
    }
    var changes: [RowChange] = []
    for (entity, keys) in held {
      guard let schema = store.schema(of: entity) else { continue }
      let rows = try await store.getRows(entity: entity, ids: keys.map(\.id))
      let fields = schema.fields.map(\.name)
      var found = Set<Value>()
      for row in rows {
        let id = row[schema.idPosition]
        found.insert(id)
        changes.append(RowChange(entity: entity, id: id, kind: .update, fields: fields, values: row.values))
      }
      for key in keys where !found.contains(key.id) {
        changes.append(RowChange(entity: entity, id: key.id, kind: .delete, fields: fields, values: []))
      }
    }
    absorb(changes)
  }

  /// Takes the store's new rows for the values the graph holds, as ``followStore()`` describes.
  func absorb(_ changes: [RowChange]) {
    if changes.isEmpty { return }
    let posted = state.withLock { state -> Bool in
      var events: [GraphEvent] = []
      for change in changes {
        let key = ModelKey(entity: change.entity, id: change.id)
        guard let entry = state.entries[key], let adapter = state.adapters[change.entity] else { continue }
        let incoming: Row? =
          change.kind == .delete
          ? nil
          : Row(adapter.schema.fields.map { change.value(of: $0.name) ?? $0.defaultValue ?? .null })
        if state.takeEcho(incoming, for: key) {
          state.entries[key]?.stored = incoming
          continue
        }
        if incoming == entry.stored { continue }
        let local = entry.current?.row
        var merged: GraphValue?
        var clashing: Set<String> = []
        if !entry.isDirty || incoming == local {
          merged = incoming == local ? entry.current : incoming.flatMap { try? adapter.value($0) }
          if incoming != nil && merged == nil {
            // A row the graph cannot decode: forget it, and read it again when asked.
            state.entries[key] = nil
            state.dirty.remove(key)
            continue
          }
        } else if let base = entry.stored, let local, let incoming {
          var values = local.values
          for position in values.indices where position < base.count && position < incoming.count {
            guard local[position] != base[position] else {
              values[position] = incoming[position]
              continue
            }
            if incoming[position] != base[position] && incoming[position] != local[position] {
              clashing.insert(adapter.schema.fields[position].name)
            }
          }
          merged = (try? adapter.value(Row(values))) ?? entry.current
        } else {
          merged = entry.current
          clashing = adapter.changedFields(local, incoming)
        }
        let changed = adapter.changedFields(local, merged?.row)
        state.entries[key]?.stored = incoming
        state.entries[key]?.current = merged
        state.entries[key]?.revision += 1
        if merged?.row != incoming { state.dirty.insert(key) }
        switch (local, merged?.row) {
        case (nil, _?): events.append(.inserted(key))
        case (_?, nil): events.append(.deleted(key))
        case (_?, _?) where !changed.isEmpty: events.append(.updated(key, fields: changed))
        default: break
        }
        if !clashing.isEmpty { events.append(.conflicted(key, fields: clashing)) }
      }
      state.post(events)
      return !events.isEmpty
    }
    if posted { deliverEvents() }
  }
}

extension GraphState {
  /// Whether a row the feed brings for a key is the one a save of this graph wrote, awaited as
  /// its echo: if so, the echo is consumed.
  mutating func takeEcho(_ row: Row?, for key: ModelKey) -> Bool {
    guard var pending = echoes[key], let first = pending.first, first == row else { return false }
    pending.removeFirst()
    echoes[key] = pending.isEmpty ? nil : pending
    return true
  }
}
