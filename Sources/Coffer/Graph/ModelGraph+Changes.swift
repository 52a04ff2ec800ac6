/// Changing values through the graph. Each call is one operation: checked by validation and
/// will-change hooks, one undo step, one burst of events, and then saved as the auto-save
/// policy says.
extension ModelGraph {
  /// Adds a new value.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` if the graph or its store has the id;
  ///   ``CofferError/Code/invalidValue`` if validation fails; ``CofferError/Code/changeVetoed``.
  public func insert<T: Storable>(_ value: T, options: ChangeOptions = .standard) async throws {
    try await perform([try await edit(value, .insert)], options: options)
  }

  /// Replaces the value with the same id.
  ///
  /// - Throws: ``CofferError/Code/notFound`` if neither the graph nor its store has the id.
  public func update<T: Storable>(_ value: T, options: ChangeOptions = .standard) async throws {
    try await perform([try await edit(value, .update)], options: options)
  }

  /// Adds the value, or replaces the one with its id: adds it to the graph explicitly.
  public func upsert<T: Storable>(_ value: T, options: ChangeOptions = .standard) async throws {
    try await perform([try await edit(value, .put)], options: options)
  }

  /// Changes the value with an id in place and returns the new value. The read and the write
  /// are atomic: concurrent calls never lose each other's changes (`body` may run again if
  /// another change to the value wins the race).
  ///
  /// ```swift
  /// try await graph.update(Counter.self, id: 1) { $0.count += 1 }
  /// ```
  ///
  /// - Throws: ``CofferError/Code/notFound`` if there is no such value, or what `body` throws.
  @discardableResult
  public func update<T: Storable>(
    _ type: T.Type, id: T.ID, options: ChangeOptions = .standard, _ body: (inout T) throws -> Void
  ) async throws -> T {
    let adapter = try await adapter(for: type)
    let key = ModelKey(type, id: id)
    while true {
      try await ensureEntries([key], adapter: adapter)
      let held = state.withLock { $0.entries[key].map { ($0.current, $0.revision) } }
      guard let (current, revision) = held else { continue }
      guard let current else {
        throw CofferError(
          .notFound, "\(key) is neither in the graph nor in its store; insert it first.",
          store: store.backend.name, entity: key.entity, id: key.id)
      }
      var value = try typed(current, as: type)
      try body(&value)
      let edit = Edit(
        key: key, new: try graphValue(value, adapter), requirement: .update, adapter: adapter,
        expectedRevision: revision)
      do {
        try await perform([edit], options: options)
        return value
      } catch is RevisionConflict {
        continue
      }
    }
  }

  /// Deletes the value with the value's id; the deletion is saved with the next save. Deleting
  /// a value that does not exist does nothing.
  public func delete<T: Storable>(_ value: T, options: ChangeOptions = .standard) async throws {
    try await delete(T.self, id: value.id, options: options)
  }

  /// Deletes the value of a type with an id.
  public func delete<T: Storable>(_ type: T.Type, id: T.ID, options: ChangeOptions = .standard) async throws {
    let adapter = try await adapter(for: type)
    try await perform(
      [Edit(key: ModelKey(type, id: id), new: nil, requirement: .put, adapter: adapter)], options: options)
  }

  /// Collects several changes and makes them as one operation: all of them or, if one is
  /// refused, none; one undo step.
  ///
  /// ```swift
  /// try await graph.batch { batch in
  ///   batch.insert(thread)
  ///   for message in messages { batch.upsert(message) }
  ///   batch.delete(Draft.self, id: draftID)
  /// }
  /// ```
  public func batch(options: ChangeOptions = .standard, _ body: (inout GraphBatch) throws -> Void)
    async throws
  {
    var batch = GraphBatch()
    try body(&batch)
    var edits: [Edit] = []
    for pending in batch.pending { edits.append(try await pending(self)) }
    try await perform(edits, options: options)
  }

  func edit<T: Storable>(_ value: T, _ requirement: Edit.Requirement) async throws -> Edit {
    let adapter = try await adapter(for: T.self)
    return Edit(
      key: ModelKey(T.self, id: value.id), new: try graphValue(value, adapter), requirement: requirement,
      adapter: adapter)
  }
}

/// Changes collected by ``ModelGraph/batch(options:_:)``.
public struct GraphBatch {
  var pending: [(ModelGraph) async throws -> ModelGraph.Edit] = []

  /// Adds an insert (fails the batch if the id exists).
  public mutating func insert<T: Storable>(_ value: T) {
    pending.append { try await $0.edit(value, .insert) }
  }
  /// Adds an update (fails the batch if the id does not exist).
  public mutating func update<T: Storable>(_ value: T) {
    pending.append { try await $0.edit(value, .update) }
  }
  /// Adds an insert-or-replace.
  public mutating func upsert<T: Storable>(_ value: T) { pending.append { try await $0.edit(value, .put) } }
  /// Adds a delete of the value with the value's id.
  public mutating func delete<T: Storable>(_ value: T) { delete(T.self, id: value.id) }
  /// Adds a delete by id.
  public mutating func delete<T: Storable>(_ type: T.Type, id: T.ID) {
    pending.append { graph in
      ModelGraph.Edit(
        key: ModelKey(type, id: id), new: nil, requirement: .put, adapter: try await graph.adapter(for: type))
    }
  }
}
