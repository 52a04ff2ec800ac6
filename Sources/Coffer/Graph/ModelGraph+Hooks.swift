/// Will-change and did-change hooks.
///
/// Hooks belong to the graph they are registered on; a scratch graph's commit is a change to
/// its parent, so the parent's hooks see it. With no hook registered, a change pays one check
/// of an empty dictionary.
extension ModelGraph {
  /// Registers a hook called before each change to a value of a type; returning
  /// ``ChangeDecision/veto(_:)`` refuses the change (and the rest of its operation), which then
  /// throws ``CofferError/Code/changeVetoed`` and leaves the graph as it was.
  ///
  /// ```swift
  /// graph.willChange(Note.self) { change in
  ///   change.new?.title.isEmpty == true ? .veto("a note needs a title") : .allow
  /// }
  /// ```
  ///
  /// The hook runs outside the graph's lock and may run again if the change races another; it
  /// should decide from its argument alone. Undo and redo do not ask will-change hooks.
  @discardableResult
  public func willChange<T: Storable>(
    _ type: T.Type, _ hook: @escaping @Sendable (GraphChange<T>) -> ChangeDecision
  ) -> HookToken {
    let codec = try? RowCodec<T>()
    return addHook(entity: T.entityName) { number in
      ErasedHook(
        number: number,
        will: { change in
          guard let typed = Self.typedChange(change, as: T.self, codec: codec) else { return .allow }
          return hook(typed)
        }, did: nil)
    }
  }

  /// Registers a hook called after each change to a value of a type, with the old and new
  /// values and the fields that changed.
  ///
  /// ```swift
  /// graph.didChange(Note.self) { change in log("\(change.id): \(change.changedFields.sorted())") }
  /// ```
  @discardableResult
  public func didChange<T: Storable>(
    _ type: T.Type, _ hook: @escaping @Sendable (GraphChange<T>) -> Void
  ) -> HookToken {
    let codec = try? RowCodec<T>()
    return addHook(entity: T.entityName) { number in
      ErasedHook(
        number: number, will: nil,
        did: { change in
          if let typed = Self.typedChange(change, as: T.self, codec: codec) { hook(typed) }
        })
    }
  }

  /// Removes a hook; removing it twice does nothing.
  public func removeHook(_ token: HookToken) {
    state.withLock { state in
      state.willHooks[token.entity]?.removeAll { $0.number == token.number }
      state.didHooks[token.entity]?.removeAll { $0.number == token.number }
      if state.willHooks[token.entity]?.isEmpty == true { state.willHooks[token.entity] = nil }
      if state.didHooks[token.entity]?.isEmpty == true { state.didHooks[token.entity] = nil }
    }
  }

  private func addHook(entity: String, _ make: (UInt64) -> ErasedHook) -> HookToken {
    state.withLock { state in
      let hook = make(state.tick())
      if hook.will != nil { state.willHooks[entity, default: []].append(hook) }
      if hook.did != nil { state.didHooks[entity, default: []].append(hook) }
      return HookToken(entity: entity, number: hook.number)
    }
  }

  /// Calls the did-change hooks of committed changes, outside the lock.
  func runDidChangeHooks(_ planned: [PlannedChange]) {
    let hooks = state.withLock { $0.didHooks.isEmpty ? [:] : $0.didHooks }
    if hooks.isEmpty { return }
    for change in planned {
      for hook in hooks[change.key.entity] ?? [] { hook.did?(change.erased) }
    }
  }

  private static func typedChange<T: Storable>(
    _ change: ErasedChange, as type: T.Type, codec: RowCodec<T>?
  ) -> GraphChange<T>? {
    guard let id = T.ID(storedScalar: change.key.id) else { return nil }
    func typed(_ value: GraphValue?) -> T?? {
      guard let value else { return .some(nil) }
      if let typed = value.value as? T { return typed }
      return (try? codec?.decode(value.row)).map { .some($0) }
    }
    guard let old = typed(change.old), let new = typed(change.new) else { return nil }
    return GraphChange(id: id, old: old, new: new, changedFields: change.fields)
  }
}
