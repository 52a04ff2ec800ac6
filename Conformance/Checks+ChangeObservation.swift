@_spi(Backend) import Coffer
import Foundation

extension ConformanceSuite {
  static let changeObservationChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "changes.observe-runs-only-for-its-entity", requires: .changeFeed,
      "With the feed on, an observed query runs again only after a batch that changed its entity: batches "
        + "committed to another entity — through the observing store, another store on the same backend, "
        + "or another handle — run it no more."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      try await store.recordChanges()
      try await store.prepare([Item.self])
      guard let recording = store.backend as? any ChangeRecording else {
        throw CheckFailure("The backend adopts ChangeRecording but the store's backend is not one.")
      }
      let counting = ReadCountingBackend(recording)
      let watched = Store(backend: counting)
      try await watched.prepare([Versioned.self, Item.self])
      var writers = [watched, store]
      if context.target.capabilities.contains(.observesOtherHandles) {
        let other = try await context.secondHandle(store)
        try await other.prepare([Versioned.self, Item.self])
        writers.append(other)
      }
      let latest = LockedState<[Versioned]?>(nil)
      let reader = Task {
        for try await values in watched.query(Versioned.self).observe() { latest.withLock { $0 = values } }
      }
      defer { reader.cancel() }
      try await waitFor("the first result", { latest.withLock { $0 } == [Versioned(id: 1, version: 0)] })
      for (number, writer) in writers.enumerated() {
        for item in Int64(1)...5 {
          try await writer.insert(
            Item(id: Int64(number) * 10 + item, name: "elsewhere", rank: nil, score: nil, flag: true))
        }
      }
      // The feed brings batches in commit order: once the observer has this update, the watcher
      // has read every batch before it. An update through the observing store runs the query
      // once (the feed brings it; the store does not signal it a second time), as does one
      // through another store or handle.
      try await watched.update(Versioned(id: 1, version: 1))
      try await waitFor("an update of the observed entity", { latest.withLock { $0?.first?.version } == 1 })
      try await (writers.last ?? store).update(Versioned(id: 1, version: 2))
      try await waitFor("an update made elsewhere", { latest.withLock { $0?.first?.version } == 2 })
      try expectEqual(
        counting.readCount(of: Versioned.entityName), 3,
        "times the query ran: at first and after each of the two batches of its entity "
          + "(\(writers.count * 5) batches of another entity committed)")
    },
    ConformanceCheck(
      "changes.observe-changes-match-recomputation", requires: .changeFeed,
      "Each change set a query observed with observeChanges yields — the ids inserted into, updated in and "
        + "removed from its result, in order — equals the difference between the query's results computed "
        + "before and after, over random inserts, updates, deletes, updates and deletes by query and cascades, "
        + "made through this store and (where the backend observes them) another handle (seed "
        + "COFFER_CONFORMANCE_SEED)."
    ) { context in
      let store = try await context.store()
      try await store.prepare([Item.self, RefThread.self, RefMessage.self])
      try await store.recordChanges()
      var writers = [store]
      if context.target.capabilities.contains(.observesOtherHandles) {
        let other = try await context.secondHandle(store)
        try await other.prepare([Item.self, RefThread.self, RefMessage.self])
        writers.append(other)
      }
      let items = store.query(Item.self).filter(\.flag == true).sort(\.rank).limit(8)
      let messages = store.query(RefMessage.self).filter(\.read == false).sort(\.threadID)
      let itemChanges = ObservedChanges(items)
      let messageChanges = ObservedChanges(messages)
      defer {
        itemChanges.stop()
        messageChanges.stop()
      }
      var itemResults = [try await items.fetch()]
      var messageResults = [try await messages.fetch()]
      try await waitFor("the first change sets", { itemChanges.count == 1 && messageChanges.count == 1 })
      var random = SplitMix64(seed: differentialSeed())
      for step in 0..<120 {
        try await randomObservedChange(to: random.pick(writers), step: step, random: &random)
        itemResults.append(try await items.fetch())
        messageResults.append(try await messages.fetch())
        if random.chance(25) {
          // Now and then the observers catch up, so that change sets of one batch are compared as
          // well as change sets that fold several.
          let (itemsNow, messagesNow) = (itemResults.last, messageResults.last)
          try await waitFor("step \(step)'s results", { itemChanges.last == itemsNow })
          try await waitFor("step \(step)'s messages", { messageChanges.last == messagesNow })
        }
      }
      let (lastItems, lastMessages) = (itemResults.last, messageResults.last)
      try await waitFor("the last items", { itemChanges.last == lastItems })
      try await waitFor("the last messages", { messageChanges.last == lastMessages })
      try compare(itemChanges.all, with: itemResults, "Item flag == true, sort rank, limit 8")
      try compare(messageChanges.all, with: messageResults, "RefMessage read == false, sort threadID")
    },
  ]

  /// The change sets a query observed with `observeChanges` yielded so far.
  final class ObservedChanges<T: Storable & Equatable>: Sendable {
    private let changes = LockedState<[QueryChanges<T>]>([])
    private let task: LockedState<Task<Void, any Error>?> = LockedState(nil)

    init(_ query: StoreQuery<T>) {
      let changes = self.changes
      task.withLock {
        $0 = Task {
          for try await change in query.observeChanges() { changes.withLock { $0.append(change) } }
        }
      }
    }

    var all: [QueryChanges<T>] { changes.withLock { $0 } }
    var count: Int { changes.withLock { $0.count } }
    var last: [T]? { changes.withLock { $0.last?.values } }
    func stop() { task.withLock { $0?.cancel() } }
  }

  /// Checks that each change set is the difference between two results the check computed,
  /// taken in order: the first against an empty result, each next one against the result the
  /// change set before it held.
  static func compare<T: Storable & Equatable>(
    _ changes: [QueryChanges<T>], with results: [[T]], _ query: String
  ) throws {
    var matched = -1
    var previous: [T] = []
    for (number, change) in changes.enumerated() {
      guard let found = results.indices.first(where: { $0 > matched && results[$0] == change.values }) else {
        throw CheckFailure(
          "\(query): change set \(number) holds a result that no step after step \(matched) computed.")
      }
      matched = found
      let expected = difference(from: previous, to: change.values)
      try expectEqual(change.inserted, expected.inserted, "\(query): change set \(number)'s inserted ids")
      try expectEqual(change.updated, expected.updated, "\(query): change set \(number)'s updated ids")
      try expectEqual(change.removed, expected.removed, "\(query): change set \(number)'s removed ids")
      if number > 0 { try expect(!change.isEmpty, "\(query): change set \(number) is not empty") }
      previous = change.values
    }
  }

  /// The ids that entered, changed in and left a result, computed from the two results.
  static func difference<T: Storable & Equatable>(from old: [T], to new: [T]) -> (
    inserted: [T.ID], updated: [T.ID], removed: [T.ID]
  ) {
    let before = Dictionary(old.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
    let after = Set(new.map(\.id))
    let inserted = new.filter { before[$0.id] == nil }.map(\.id)
    let updated = new.filter { value in before[value.id].map { $0 != value } ?? false }.map(\.id)
    let removed = old.filter { !after.contains($0.id) }.map(\.id)
    return (inserted, updated, removed)
  }

  /// One random batch: items inserted, changed, written again unchanged, deleted one by one and
  /// by query; messages added, marked read by query, or removed by their thread's cascade; and
  /// now and then nothing the queries read.
  static func randomObservedChange(to store: Store, step: Int, random: inout SplitMix64) async throws {
    let id = Int64(1 + random.below(16))
    let thread = Int64(1 + random.below(4))
    let rank: Int64? = random.chance(20) ? nil : Int64(random.below(10))
    do {
      switch random.below(10) {
      case 0, 1:
        try await store.upsert(
          Item(id: id, name: "i\(step)", rank: rank, score: nil, flag: random.chance(70)))
      case 2:
        if let item = try await store.get(Item.self, id: id) { try await store.update(item) }
      case 3: try await store.delete(Item.self, id: id)
      case 4: _ = try await store.query(Item.self).filter(\.id >= id).update(\.name, to: "q\(step)")
      case 5: _ = try await store.query(Item.self).filter(\.rank == rank ?? 0).delete()
      case 6:
        try await store.batch { batch in
          try batch.upsert(Item(id: id, name: "b\(step)", rank: rank, score: 0.5, flag: true))
          try batch.delete(Item.self, id: id % 16 + 1)
        }
      case 7:
        try await store.upsert(RefThread(id: thread, title: "t"))
        try await store.insert(RefMessage(id: 100 + id, threadID: thread, text: "m\(step)", read: false))
      case 8:
        if random.chance(50) {
          _ = try await store.query(RefMessage.self).filter(\.threadID == thread).update(\.read, to: true)
        } else {
          try await store.delete(RefThread.self, id: thread)
        }
      default: try await store.upsert(RefThread(id: thread, title: "nothing observed \(step)"))
      }
    } catch let error as CofferError where error.code == .duplicateID || error.code == .notFound {
      return
    }
  }
}
