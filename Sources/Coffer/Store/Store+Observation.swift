/// The observers of a store's queries, told which entities each applied batch changed.
struct StoreObservers: Sendable {
  /// How commits reach the observers while anyone observes.
  enum Mode: Sendable {
    /// The watcher is finding out whether the store records a change feed, and where it ends:
    /// observers added meanwhile run their query first when it knows.
    case starting
    /// Every commit, this handle's too, comes from the change feed, with the entities it changed.
    case feed
    /// This handle's commits are signalled as they are applied; other handles' and processes'
    /// when the backend's commit marker moves, to every observer.
    case marker
  }

  var next: UInt64 = 0
  var signals: [UInt64: (entity: String, signal: AsyncStream<Void>.Continuation)] = [:]
  /// Watches for commits while anyone observes (see `watchCommits`).
  var watcher: Task<Void, Never>?
  /// Which watcher is current: one cancelled as the last observer left may still be ending.
  var watcherNumber: UInt64 = 0
  var mode = Mode.starting
  /// The observers added while the watcher starts, whose first run waits for it.
  var waiting: [AsyncStream<Void>.Continuation] = []
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

  /// Signals the observers of any of these entities that this handle applied a batch to, after
  /// the lock is released. The entities are read only when someone observes, so a large batch
  /// with no observers costs nothing here. When the observers follow the change feed, the feed
  /// brings this handle's batches too, and this does nothing: each batch runs a query once.
  func notifyObservers(ofChangesTo changed: some Sequence<String>) {
    let signals = observers.withLock { observers -> [AsyncStream<Void>.Continuation] in
      if observers.signals.isEmpty { return [] }
      guard case .marker = observers.mode else { return [] }
      let entities = Set(changed)
      return observers.signals.values.filter { entities.contains($0.entity) }.map(\.signal)
    }
    for signal in signals { signal.yield() }
  }

  /// Signals the observers of any of these entities, whatever the mode.
  func signalObservers(of entities: Set<String>) {
    let signals = observers.withLock { observers in
      observers.signals.values.filter { entities.contains($0.entity) }.map(\.signal)
    }
    for signal in signals { signal.yield() }
  }

  /// Signals every observer.
  func signalAllObservers() {
    let signals = observers.withLock { $0.signals.values.map(\.signal) }
    for signal in signals { signal.yield() }
  }

  /// Registers an observer of an entity and signals it to run its query a first time: at once,
  /// or, while the watcher starts, once it watches, so no commit falls between the first run
  /// and the point the watcher watches from.
  func addObserver(entity: String, _ signal: AsyncStream<Void>.Continuation) -> UInt64 {
    let (number, now) = observers.withLock { observers -> (UInt64, Bool) in
      observers.next += 1
      observers.signals[observers.next] = (entity, signal)
      if observers.watcher == nil {
        observers.watcherNumber += 1
        observers.mode = .starting
        observers.watcher = watchCommits(number: observers.watcherNumber)
      }
      if case .starting = observers.mode {
        observers.waiting.append(signal)
        return (observers.next, false)
      }
      return (observers.next, true)
    }
    if now { signal.yield() }
    return number
  }

  func removeObserver(_ number: UInt64) {
    let watcher = observers.withLock { observers -> Task<Void, Never>? in
      observers.signals.removeValue(forKey: number)
      guard observers.signals.isEmpty else { return nil }
      defer {
        observers.watcher = nil
        observers.waiting = []
      }
      return observers.watcher
    }
    watcher?.cancel()
  }

  /// Sets how commits reach the observers, and lets those waiting for the watcher run their
  /// first query. Does nothing for a watcher that is no longer current.
  func observersWatch(_ mode: StoreObservers.Mode, number: UInt64) {
    let waiting = observers.withLock { observers -> [AsyncStream<Void>.Continuation] in
      guard observers.watcherNumber == number, observers.watcher != nil else { return [] }
      observers.mode = mode
      defer { observers.waiting = [] }
      return observers.waiting
    }
    for signal in waiting { signal.yield() }
  }

  /// How soon an observed store asks its backend again whether anyone committed, after a poll
  /// that found a commit (and at first).
  static let commitPollInterval = Duration.milliseconds(60)
  /// The longest wait between two polls: each poll that finds nothing new makes the next wait a
  /// quarter longer, up to this, so that an observer of a store nobody writes costs less, and
  /// one that sees commits keeps asking every ``commitPollInterval``.
  static let idleCommitPollInterval = Duration.milliseconds(150)

  /// A task that tells observers of commits until it is cancelled: from the change feed when
  /// the store records one (see `watchFeedCommits`), else from the backend's commit marker,
  /// which only says that something was committed elsewhere.
  private func watchCommits(number: UInt64) -> Task<Void, Never> {
    Task { [weak self] in
      if let recording = self?.backend as? any ChangeRecording,
        let bounds = try? await recording.changeFeedBounds()
      {
        guard let self else { return }
        self.observersWatch(.feed, number: number)
        await self.watchFeedCommits(recording, after: bounds.last)
        return
      }
      guard let backend = self?.backend as? any CommitObserving, var last = try? await backend.commitMarker()
      else {
        self?.observersWatch(.marker, number: number)
        return
      }
      self?.observersWatch(.marker, number: number)
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
        signalAllObservers()
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
  /// ``BackendCapabilities/observesOtherHandles`` (memory, SQLite, LMDB, PostgreSQL).
  ///
  /// When the store records a change feed (see <doc:RecordingChanges>), observation follows it: the
  /// query runs again only after a batch — from this store, another handle or another process
  /// — that changed a row of its entity (the rows a delete rule cascaded to count), and a commit
  /// elsewhere reaches it as soon as the backend wakes the feed's followers (within a few
  /// milliseconds on SQLite and LMDB). Without a feed, commits elsewhere are noticed by polling
  /// the backend's commit marker every 60–150 ms, and run every observed query again.
  ///
  /// The sequence ends when the task reading it is cancelled, and throws if the query fails — at
  /// once, for a query that cannot run (a key path that reads no stored field).
  public func observe() -> AsyncThrowingStream<[T], any Error> {
    observeRows { _, rows, codec in try rows.map(codec.decode) }
  }

  /// What changes in the query's result: first the whole result, as inserted, then, each time a
  /// batch changes the result, the new result with the ids that entered it, changed in it or
  /// left it — like Realm's collection change sets, with ids where Realm gives indices.
  ///
  /// ```swift
  /// for try await change in store.query(Message.self).filter(\.threadID == 7).sort(\.date).observeChanges() {
  ///   messages = change.values
  ///   for id in change.inserted { highlight(id) }
  /// }
  /// ```
  ///
  /// The query runs again when ``observe()``'s would, and a change set is yielded when the
  /// result differs from the last one yielded; batches applied while the query runs are folded
  /// into one change set, which compares the results before and after all of them. See
  /// ``QueryChanges`` for what each list holds.
  public func observeChanges() -> AsyncThrowingStream<QueryChanges<T>, any Error> {
    observeRows { previous, rows, codec in try QueryChanges(from: previous ?? [], to: rows, codec: codec) }
  }

  /// Runs the query at first and again as observation says (see ``observe()``), and yields what
  /// `element` makes of each result that differs from the last: given the last result (`nil`
  /// the first time), the new one and the codec.
  private func observeRows<Element: Sendable>(
    _ element: @escaping @Sendable (_ previous: [Row]?, _ rows: [Row], _ codec: RowCodec<T>) throws -> Element
  ) -> AsyncThrowingStream<Element, any Error> {
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
      let task = Task {
        var last: [Row]?
        for await _ in signals {
          do {
            let codec = try await store.codec(for: T.self)
            let query = try unchecked.validated(for: codec)
            let rows = try await store.readInTurn { try await store.backend.fetch(query) }
            if rows == last { continue }
            continuation.yield(try element(last, rows, codec))
            last = rows
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
