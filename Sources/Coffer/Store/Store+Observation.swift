/// The observers of a store's queries, told which entities each applied batch changed.
struct StoreObservers: Sendable {
  var next: UInt64 = 0
  var signals: [UInt64: (entity: String, signal: AsyncStream<Void>.Continuation)] = [:]
  /// Watches the backend's commit marker while anyone observes (see `watchForeignCommits`).
  var watcher: Task<Void, Never>?
}

extension Store {
  /// Signals the observers of every entity the operations changed, outside the lock.
  func notifyObservers(of operations: [ChangeSet.Operation]) {
    notifyObservers(ofChangesTo: operations.lazy.map(\.entity))
  }

  /// Signals the observers of one entity.
  @usableFromInline
  func notifyObservers(ofChangesTo entity: String) {
    notifyObservers(ofChangesTo: CollectionOfOne(entity))
  }

  /// Signals the observers of any of these entities, after the lock is released. The entities
  /// are read only when someone observes, so a large batch with no observers costs nothing here.
  func notifyObservers(ofChangesTo changed: some Sequence<String>) {
    let signals = observers.withLock { observers -> [AsyncStream<Void>.Continuation] in
      if observers.signals.isEmpty { return [] }
      let entities = Set(changed)
      return observers.signals.values.filter { entities.contains($0.entity) }.map(\.signal)
    }
    for signal in signals { signal.yield() }
  }

  func addObserver(entity: String, _ signal: AsyncStream<Void>.Continuation) -> UInt64 {
    observers.withLock { observers in
      observers.next += 1
      observers.signals[observers.next] = (entity, signal)
      if observers.watcher == nil { observers.watcher = watchForeignCommits() }
      return observers.next
    }
  }

  func removeObserver(_ number: UInt64) {
    let watcher = observers.withLock { observers -> Task<Void, Never>? in
      observers.signals.removeValue(forKey: number)
      guard observers.signals.isEmpty else { return nil }
      defer { observers.watcher = nil }
      return observers.watcher
    }
    watcher?.cancel()
  }

  /// How soon an observed store asks its backend again whether anyone committed, after a poll
  /// that found a commit (and at first).
  static let commitPollInterval = Duration.milliseconds(60)
  /// The longest wait between two polls: each poll that finds nothing new makes the next wait a
  /// quarter longer, up to this, so that an observer of a store nobody writes costs less, and
  /// one that sees commits keeps asking every ``commitPollInterval``.
  static let idleCommitPollInterval = Duration.milliseconds(150)

  /// A task that signals every observer when the backend's commit marker moves: commits made
  /// through another handle or by another process, which this store did not see applied.
  /// It ends at once on a backend that has no marker.
  private func watchForeignCommits() -> Task<Void, Never> {
    Task { [weak self] in
      if let recording = self?.backend as? any ChangeRecording,
        await self?.watchFeedCommits(recording) == true
      {
        return
      }
      guard let backend = self?.backend as? any CommitObserving, var last = try? await backend.commitMarker()
      else { return }
      // A marker may move a moment before readers see the commit (a server's log position
      // does): after it moves, the queries run once more at the next poll.
      var again = false
      var interval = Self.commitPollInterval
      while !Task.isCancelled {
        try? await Task.sleep(for: interval)
        guard let self else { return }
        guard let now = try? await backend.commitMarker() else { continue }
        let moved = now != last
        interval = moved ? Self.commitPollInterval : min(interval * 5 / 4, Self.idleCommitPollInterval)
        guard moved || again else { continue }
        (last, again) = (now, moved)
        let signals = observers.withLock { $0.signals.values.map(\.signal) }
        for signal in signals { signal.yield() }
      }
    }
  }
}

extension StoreQuery {
  /// The query's result now, then a fresh result each time a batch applied through this store
  /// (an insert, update, delete, batch, or a ``ModelGraph`` save) changes it.
  ///
  /// ```swift
  /// for try await unread in store.query(Message.self).filter(FieldRef("isRead") == false).observe() {
  ///   badge = unread.count
  /// }
  /// ```
  ///
  /// After each batch that touches the query's entity the query runs again; a result equal to
  /// the last one is not repeated, and batches applied while a query runs are folded into one
  /// fresh result. Commits made through another `Store` on the same data, or by another
  /// process, are seen too on a backend that declares
  /// ``BackendCapabilities/observesOtherHandles`` (memory, SQLite, LMDB, PostgreSQL), within a few tens of
  /// milliseconds. The
  /// sequence ends when the task reading it is cancelled, and throws if the query fails — at
  /// once, for a query that cannot run (a key path that reads no stored field).
  public func observe() -> AsyncThrowingStream<[T], any Error> {
    let store = self.store
    let unchecked = self
    if source != nil {
      return AsyncThrowingStream {
        throw CofferError(
          .unsupported, "Observe a query of the store itself, not of a snapshot or a transaction.",
          store: store.backend.name, entity: unchecked.query.entity)
      }
    }
    return AsyncThrowingStream { continuation in
      let (signals, signal) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
      let number = store.addObserver(entity: unchecked.query.entity, signal)
      signal.yield()
      let task = Task {
        var last: [Row]?
        for await _ in signals {
          do {
            let codec = try await store.codec(for: T.self)
            let query = try unchecked.validated(for: codec)
            let rows = try await store.readInTurn { try await store.backend.fetch(query) }
            if rows == last { continue }
            last = rows
            continuation.yield(try rows.map(codec.decode))
          } catch {
            continuation.finish(throwing: error)
            return
          }
        }
      }
      continuation.onTermination = { _ in
        task.cancel()
        store.removeObserver(number)
        signal.finish()
      }
    }
  }
}
