/// The one path every change takes: load, plan, validate, ask will-change hooks, commit under
/// the lock, then tell did-change hooks and event streams, and auto-save.
extension ModelGraph {
  /// A change requested of the graph, before it is checked against what the graph holds.
  struct Edit {
    enum Requirement {
      /// Fails with `duplicateID` if the graph or its source holds the record.
      case insert
      /// Fails with `notFound` unless the graph or its source holds the record.
      case update
      /// Inserts or replaces (or deletes, when `new` is `nil`).
      case put
      /// Does nothing if the record exists.
      case createIfAbsent
    }
    var key: ModelKey
    var new: GraphValue?
    var requirement: Requirement
    var adapter: EntityAdapter
    /// For read-modify-write: the revision the new value was computed from.
    var expectedRevision: UInt64?
  }

  /// Why a change is made, which decides what it does to the undo history.
  enum Origin: Equatable {
    case change
    case undo(UInt64)
    case redo(UInt64)

    /// Undo and redo restore earlier values, which were checked when first made.
    var isChecked: Bool { self == .change }
  }

  /// One record's change, checked and ready to commit.
  struct PlannedChange {
    var key: ModelKey
    var old: GraphValue?
    var new: GraphValue?
    var fields: Set<String>
    var adapter: EntityAdapter

    var erased: ErasedChange { ErasedChange(key: key, old: old, new: new, fields: fields) }

    var event: GraphEvent {
      if old == nil { return .inserted(key) }
      if new == nil { return .deleted(key) }
      return .updated(key, fields: fields)
    }
  }

  /// The record changed between reading it and committing a change computed from it.
  struct RevisionConflict: Error {}
  /// The undo or redo step being applied is no longer the last one.
  struct StaleHistory: Error {}

  /// Applies edits as one operation: all of them or, if any is refused, none.
  func perform(_ edits: [Edit], options: ChangeOptions, origin: Origin = .change) async throws {
    if edits.isEmpty && origin == .change { return }
    while true {
      var keysByEntity: [String: (EntityAdapter, [ModelKey])] = [:]
      for edit in edits { keysByEntity[edit.key.entity, default: (edit.adapter, [])].1.append(edit.key) }
      for (adapter, keys) in keysByEntity.values { try await ensureEntries(keys, adapter: adapter) }
      let snapshot: [ModelKey: GraphEntry]? = state.withLock { state in
        var found: [ModelKey: GraphEntry] = [:]
        for edit in edits {
          guard let entry = state.entries[edit.key] else { return nil }
          found[edit.key] = entry
        }
        return found
      }
      guard let snapshot else { continue }  // removed while loading: load again
      let planned = try plan(edits, snapshot)
      if planned.isEmpty && origin == .change { return }
      if origin.isChecked { try check(planned, options: options) }
      guard let action = try commit(planned, snapshot: snapshot, options: options, origin: origin) else {
        continue
      }
      runDidChangeHooks(planned)
      deliverEvents()
      try await autoSave(action)
      return
    }
  }

  private func plan(_ edits: [Edit], _ snapshot: [ModelKey: GraphEntry]) throws -> [PlannedChange] {
    var overlay: [ModelKey: GraphValue?] = [:]
    var planned: [PlannedChange] = []
    for edit in edits {
      guard let entry = snapshot[edit.key] else { continue }
      if let expected = edit.expectedRevision, entry.revision != expected { throw RevisionConflict() }
      let old = overlay[edit.key] ?? entry.current
      switch edit.requirement {
      case .insert where old != nil:
        throw CofferError(
          .duplicateID,
          "\(edit.key) is already in the graph or its store; update it instead of inserting it.",
          store: store.backend.name, entity: edit.key.entity, id: edit.key.id)
      case .update where old == nil:
        throw CofferError(
          .notFound, "\(edit.key) is neither in the graph nor in its store; insert it first.",
          store: store.backend.name, entity: edit.key.entity, id: edit.key.id)
      case .createIfAbsent where old != nil:
        continue
      default:
        break
      }
      let fields = edit.adapter.changedFields(old?.row, edit.new?.row)
      if old == nil && edit.new == nil { continue }
      if old != nil && edit.new != nil && fields.isEmpty { continue }
      planned.append(
        PlannedChange(key: edit.key, old: old, new: edit.new, fields: fields, adapter: edit.adapter))
      overlay[edit.key] = .some(edit.new)
    }
    return planned
  }

  /// Validation, then will-change hooks; either can refuse the whole operation.
  private func check(_ planned: [PlannedChange], options: ChangeOptions) throws {
    for change in planned {
      guard let validate = change.adapter.validate, let value = change.new?.value else { continue }
      let problems = validate(value)
      if problems.isEmpty { continue }
      if !options.silent {
        state.withLock { $0.post([.validationFailed(change.key, problems: problems)]) }
        deliverEvents()
      }
      throw ValidationFailure(key: change.key, problems: problems).error.inStore(store.backend.name)
    }
    let hooks = state.withLock { $0.willHooks.isEmpty ? [:] : $0.willHooks }
    if hooks.isEmpty { return }
    for change in planned {
      for hook in hooks[change.key.entity] ?? [] {
        guard let will = hook.will, case .veto(let reason) = will(change.erased) else { continue }
        throw CofferError(
          .changeVetoed,
          "A will-change hook refused the change to \(change.key): \(reason). Nothing changed.",
          store: store.backend.name, entity: change.key.entity, id: change.key.id)
      }
    }
  }

  /// Commits under the lock; `nil` when a record changed since `snapshot` (plan again).
  private func commit(
    _ planned: [PlannedChange], snapshot: [ModelKey: GraphEntry], options: ChangeOptions, origin: Origin
  ) throws -> AutoSaveAction? {
    try state.withLock { state -> AutoSaveAction? in
      for (key, entry) in snapshot where state.entries[key]?.revision != entry.revision { return nil }
      switch origin {
      case .change:
        break
      case .undo(let number):
        guard state.undo.last?.number == number else { throw StaleHistory() }
      case .redo(let number):
        guard state.redo.last?.number == number else { throw StaleHistory() }
      }
      for change in planned {
        let order = state.tick()
        state.entries[change.key]?.current = change.new
        state.entries[change.key]?.revision += 1
        state.entries[change.key]?.order = order
        state.dirty.insert(change.key)
        if state.adapters[change.key.entity] == nil { state.adapters[change.key.entity] = change.adapter }
      }
      record(planned, origin: origin, in: &state)
      state.changesSinceSave += planned.count
      if !options.silent { state.post(planned.map(\.event)) }
      return state.autoSaveAction()
    }
  }

  /// Updates the undo and redo stacks for a committed operation.
  private func record(_ planned: [PlannedChange], origin: Origin, in state: inout GraphState) {
    switch origin {
    case .change:
      let steps = planned.map { UndoStep(key: $0.key, before: $0.old, after: $0.new, adapter: $0.adapter) }
      state.undo.append(UndoGroup(number: state.tick(), steps: steps))
      if state.undo.count > state.undoLimit { state.undo.removeFirst(state.undo.count - state.undoLimit) }
      state.redo.removeAll()
    case .undo:
      if let group = state.undo.popLast() { state.redo.append(group) }
    case .redo:
      if let group = state.redo.popLast() { state.undo.append(group) }
    }
  }
}
