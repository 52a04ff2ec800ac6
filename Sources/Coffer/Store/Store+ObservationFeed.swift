extension Store {
  /// Signals the observers of the entities each committed batch changed, as the change feed
  /// tells them, from the batch after `start` until the task is cancelled: what observation runs
  /// on when the store records a feed. Only queries of an entity a batch touched run again;
  /// this handle's commits arrive at once, other handles' and processes' as soon as the backend
  /// wakes followers (within a few milliseconds on SQLite and LMDB) instead of at a marker's
  /// next poll. Reading a batch's entities decodes only the head of its record, not its rows.
  func watchFeedCommits(_ recording: any ChangeRecording, after start: UInt64) async {
    var cursor = start
    while !Task.isCancelled {
      do {
        try await recording.waitForChanges(after: cursor, timeout: .seconds(1))
        let batches = try await recording.readChanges(after: cursor, limit: 256)
        guard let last = batches.last else { continue }
        cursor = last.sequence
        var entities = Set<String>()
        for batch in batches { entities.formUnion(try batch.entities(store: backend.name)) }
        signalObservers(of: entities)
      } catch {
        // A trimmed or unreadable feed: watching goes on from the feed's end, and every query
        // runs again, for what it may have missed.
        if let bounds = try? await recording.changeFeedBounds() { cursor = bounds.last }
        signalAllObservers()
        try? await Task.sleep(for: Self.commitPollInterval)
      }
    }
  }
}
