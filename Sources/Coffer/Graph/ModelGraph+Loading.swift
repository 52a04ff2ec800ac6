/// Reading records the graph does not hold yet, from its store or its parent.
extension ModelGraph {
  /// The adapter of a ``Storable`` type, preparing its entity in the store the first time.
  func adapter<T: Storable>(for type: T.Type) async throws -> EntityAdapter {
    let codec = try await store.codec(for: type)
    let known = state.withLock { $0.adapters[T.entityName] }
    if let known, known.decode != nil, known.schema == codec.schema { return known }
    let adapter = EntityAdapter.typed(codec)
    try register(adapter)
    return adapter
  }

  /// Records an adapter for its entity.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` when the graph holds the entity's records
  ///   with another schema (another type of the same entity, or a snapshot of an older version).
  func register(_ adapter: EntityAdapter) throws {
    try state.withLock { state in
      let entity = adapter.schema.name
      if let known = state.adapters[entity], known.schema != adapter.schema,
        state.entries.keys.contains(where: { $0.entity == entity })
      {
        throw CofferError(
          .schemaMismatch,
          "The graph holds \(entity) records with another schema than the one used now (a snapshot "
            + "of another version, or two types sharing the entity). Clear the graph or use one type per entity.",
          store: store.backend.name, entity: entity)
      }
      state.adapters[entity] = adapter
    }
  }

  /// What this graph holds for the keys, or what its source holds for keys it does not hold;
  /// absent records are missing from the result. Nothing is retained.
  func view(_ keys: [ModelKey], adapter: EntityAdapter) async throws -> [ModelKey: GraphValue] {
    var result: [ModelKey: GraphValue] = [:]
    let missing: [ModelKey] = state.withLock { state in
      keys.filter { key in
        guard let entry = state.entries[key] else { return true }
        if let current = entry.current { result[key] = current }
        return false
      }
    }
    for (key, value) in try await sourceView(missing, adapter: adapter) { result[key] = value }
    return result
  }

  /// What the source holds for keys.
  func sourceView(_ keys: [ModelKey], adapter: EntityAdapter) async throws -> [ModelKey: GraphValue] {
    if keys.isEmpty { return [:] }
    switch source {
    case .parent(let parent):
      return try await parent.view(keys, adapter: adapter)
    case .store(let store):
      let schema = adapter.schema
      let rows = try await store.getRows(entity: schema.name, ids: keys.map(\.id))
      var result: [ModelKey: GraphValue] = [:]
      for row in rows {
        result[ModelKey(entity: schema.name, id: row[schema.idPosition])] = try adapter.value(row)
      }
      return result
    }
  }

  /// Makes sure the graph holds an entry for each key, loading the missing ones from the source.
  func ensureEntries(_ keys: [ModelKey], adapter: EntityAdapter) async throws {
    let missing = state.withLock { state in keys.filter { state.entries[$0] == nil } }
    if missing.isEmpty { return }
    let loaded = try await sourceView(missing, adapter: adapter)
    state.withLock { state in
      for key in missing where state.entries[key] == nil {
        state.entries[key] = GraphEntry(stored: loaded[key]?.row, current: loaded[key])
      }
    }
  }

  /// The value for a key, loaded from the source if needed and retained if the entity retains
  /// what it reads.
  func load(_ key: ModelKey, adapter: EntityAdapter) async throws -> GraphValue? {
    let held: GraphValue?? = state.withLock { state in state.entries[key].map { $0.current } }
    if let held { return held }
    let loaded = try await sourceView([key], adapter: adapter)[key]
    guard adapter.retainsLoaded else { return loaded }
    return state.withLock { state in
      if let entry = state.entries[key] { return entry.current }
      state.entries[key] = GraphEntry(stored: loaded?.row, current: loaded)
      return loaded
    }
  }

  /// The typed value of a graph value, decoding its row when the graph has not yet.
  func typed<T: Storable>(_ value: GraphValue, as type: T.Type) throws -> T {
    if let typed = value.value as? T { return typed }
    return try RowCodec<T>().decode(value.row)
  }
}
