extension Store {
  /// Signals the observers of the entities that commits made elsewhere changed, as the change
  /// feed tells them, until the task is cancelled: what observation runs on instead of the
  /// commit marker when the store records a feed. Only queries of an entity a batch touched run
  /// again, and a commit reaches them as soon as the backend wakes followers (within a few
  /// milliseconds on SQLite and LMDB) instead of at the marker's next poll.
  ///
  /// - Returns: `false` at once, having watched nothing, when the store records no feed.
  func watchFeedCommits(_ recording: any ChangeRecording) async -> Bool {
    guard let bounds = try? await recording.changeFeedBounds() else { return false }
    var cursor = bounds.last
    while !Task.isCancelled {
      do {
        try await recording.waitForChanges(after: cursor, timeout: .seconds(1))
        let batches = try await recording.readChanges(after: cursor, limit: 256)
        guard let last = batches.last else { continue }
        cursor = last.sequence
        var entities = Set<String>()
        for batch in batches {
          for change in try batch.decoded(store: backend.name).changes { entities.insert(change.entity) }
        }
        notifyObservers(ofChangesTo: entities)
      } catch {
        // A trimmed or unreadable feed: every query runs again, and watching goes on from the
        // feed's end.
        let signals = observers.withLock { $0.signals.values.map(\.signal) }
        for signal in signals { signal.yield() }
        guard let bounds = try? await recording.changeFeedBounds() else { return true }
        cursor = bounds.last
        try? await Task.sleep(for: Self.commitPollInterval)
      }
    }
    return true
  }
}
