/// What a change asks of the auto-save policy once committed.
enum AutoSaveAction {
  case none
  case saveNow
  case startBackground
}

extension GraphState {
  /// The policy in force: manual while ``ModelGraph/withoutAutoSave(_:)`` runs.
  var effectiveAutoSave: AutoSave { suspensions > 0 ? .manual : autoSave }

  /// What a committed change asks for, marking a background save as scheduled.
  mutating func autoSaveAction() -> AutoSaveAction {
    switch effectiveAutoSave {
    case .manual: return .none
    case .immediate: return .saveNow
    case .everyChanges(let count): return changesSinceSave >= max(1, count) ? .saveNow : .none
    case .background:
      if backgroundScheduled { return .none }
      backgroundScheduled = true
      return .startBackground
    }
  }
}

/// Auto-save policies.
extension ModelGraph {
  /// When changes are saved without calling ``save()``. Changing it does not save pending
  /// changes; the next change follows the new policy.
  public var autoSave: AutoSave {
    get { state.withLock { $0.autoSave } }
    set { state.withLock { $0.autoSave = newValue } }
  }

  /// Runs `body` with automatic saving suspended — for hydrating the graph from elsewhere — and
  /// restores the policy when `body` returns or throws. Changes made meanwhile stay unsaved
  /// until the next save (explicit, or by the policy on the next change). Calls nest.
  ///
  /// ```swift
  /// try await graph.withoutAutoSave {
  ///   for note in downloaded { try await graph.upsert(note) }
  /// }
  /// ```
  public func withoutAutoSave<Result>(_ body: () async throws -> Result) async rethrows -> Result {
    state.withLock { $0.suspensions += 1 }
    defer { state.withLock { $0.suspensions -= 1 } }
    return try await body()
  }

  /// Whether automatic saving is suspended by ``withoutAutoSave(_:)``.
  public var isAutoSaveSuspended: Bool { state.withLock { $0.suspensions > 0 } }

  /// Waits for background saving to finish, then saves whatever is still unsaved.
  ///
  /// - Throws: the error of that last save, which retries changes a background save failed on.
  public func flush() async throws {
    if let task = state.withLock({ $0.backgroundTask }) { await task.value }
    state.withLock { $0.backgroundError = nil }
    try await save()
  }

  /// Does what a committed change asked of the policy.
  func autoSave(_ action: AutoSaveAction) async throws {
    switch action {
    case .none: return
    case .saveNow: try await save()
    case .startBackground:
      let task = Task { await self.saveInBackground() }
      state.withLock { state in if state.backgroundScheduled { state.backgroundTask = task } }
    }
  }

  /// Saves until no change is left, stopping at the first failure (``flush()`` reports it).
  private func saveInBackground() async {
    while true {
      do {
        try await save()
      } catch {
        state.withLock { $0.backgroundError = error }
      }
      let again = state.withLock { state in
        if state.backgroundError == nil, !state.dirty.isEmpty, state.effectiveAutoSave == .background {
          return true
        }
        state.backgroundScheduled = false
        state.backgroundTask = nil
        return false
      }
      if !again { return }
    }
  }
}
