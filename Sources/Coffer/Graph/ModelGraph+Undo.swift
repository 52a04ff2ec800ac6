/// Undo and redo of changes made through the graph.
///
/// Each operation — one insert, update, upsert or delete, one ``ModelGraph/batch(options:_:)``, one
/// commit of a scratch graph — is one step. Undo puts back the values exactly as they were
/// before the step and redo puts back those after it; both emit the usual events, run
/// did-change hooks and follow the auto-save policy. Undoing a change that was already saved
/// makes the reverse change, which the next save writes.
extension ModelGraph {
  /// Whether there is a step to undo.
  public var canUndo: Bool { state.withLock { !$0.undo.isEmpty } }
  /// Whether there is a step to redo.
  public var canRedo: Bool { state.withLock { !$0.redo.isEmpty } }

  /// How many steps are kept for undo; older ones are forgotten. 100 by default.
  public var undoLimit: Int {
    get { state.withLock { $0.undoLimit } }
    set {
      state.withLock { state in
        state.undoLimit = max(0, newValue)
        if state.undo.count > state.undoLimit { state.undo.removeFirst(state.undo.count - state.undoLimit) }
      }
    }
  }

  /// Undoes the last step. Returns `false` when there was nothing to undo.
  @discardableResult
  public func undo() async throws -> Bool {
    while true {
      guard let group = state.withLock({ $0.undo.last }) else { return false }
      let edits = group.steps.reversed().map {
        Edit(key: $0.key, new: $0.before, requirement: .put, adapter: $0.adapter)
      }
      do {
        try await perform(edits, options: .standard, origin: .undo(group.number))
        return true
      } catch is StaleHistory {
        continue
      }
    }
  }

  /// Redoes the last undone step. Returns `false` when there was nothing to redo. Any new
  /// change clears what could be redone.
  @discardableResult
  public func redo() async throws -> Bool {
    while true {
      guard let group = state.withLock({ $0.redo.last }) else { return false }
      let edits = group.steps.map { Edit(key: $0.key, new: $0.after, requirement: .put, adapter: $0.adapter) }
      do {
        try await perform(edits, options: .standard, origin: .redo(group.number))
        return true
      } catch is StaleHistory {
        continue
      }
    }
  }
}
