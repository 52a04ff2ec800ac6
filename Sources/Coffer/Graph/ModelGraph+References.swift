/// Keeping a graph's values in step with the delete rules the store applies.
extension ModelGraph {
  /// Forgets the values the store's delete rules changed when a save deleted rows: those that
  /// refer to a deleted row under ``DeleteRule/cascade`` (deleted with it, and in turn what
  /// refers to them) or ``DeleteRule/nullify`` (their field is null now). The next read loads
  /// them as stored. A value with unsaved changes is kept: saving it refers to a deleted row, so
  /// the store refuses it with ``CofferError/Code/referenceViolation``.
  func forgetReferrers(ofDeleted deleted: [ModelKey]) {
    if deleted.isEmpty { return }
    state.withLock { state in
      var gone = Set(deleted)
      var queue = deleted
      var forgot = false
      while let key = queue.popLast() {
        for (candidate, entry) in Array(state.entries) where !entry.isDirty {
          guard let schema = state.adapters[candidate.entity]?.schema, let row = entry.current?.row else {
            continue
          }
          let rule = schema.references.first { reference in
            reference.entity == key.entity && reference.isEnforced
              && schema.position(of: reference.field).map { row[$0] == key.id } == true
          }?.onDelete
          guard let rule else { continue }
          state.entries.removeValue(forKey: candidate)
          state.dirty.remove(candidate)
          forgot = true
          if rule == .cascade, gone.insert(candidate).inserted { queue.append(candidate) }
        }
      }
      if forgot { state.forgetHistory() }
    }
  }
}
