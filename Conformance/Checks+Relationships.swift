@_spi(Backend) import Coffer
import Foundation

/// Rows whose reference names a row their referenced entity does not hold, as `Entity#id`.
func danglingReferences<Child: Storable>(
  _ type: Child.Type, in store: Store, _ parent: (Child) -> Int64?
) async throws -> [String] {
  let threads = Set(try await store.all(RefThread.self).map(\.id))
  return try await store.all(type).compactMap { child in
    guard let id = parent(child), !threads.contains(id) else { return nil }
    return "\(Child.entityName)#\(child.id)"
  }
}

/// Runs `body` and ignores the errors a writer racing other writers may meet.
func racing(_ body: () async throws -> Void) async throws {
  do {
    try await body()
  } catch let error as CofferError where error.code == .referenceViolation || error.code == .conflict {
    return
  }
}

extension ConformanceSuite {
  static let referenceRelationChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.many-to-many", requires: .preconditions,
      "link stores a join row once per pair, linked follows the links, unlink removes them, and deleting either "
        + "side removes its links."
    ) { context in
      let store = try await storeWithThreads(context, also: [RefLabel.self, RefLabeling.self])
      try await store.insert([RefLabel(id: "red", name: "Red"), RefLabel(id: "blue", name: "Blue")])
      func labeling(_ message: Int64, _ label: String) -> RefLabeling {
        RefLabeling(id: "\(message)/\(label)", messageID: message, labelID: label)
      }
      try expect(
        try await store.link(labeling(11, "red"), \.messageID, \.labelID), "the first link is stored")
      try expect(!(try await store.link(labeling(11, "red"), \.messageID, \.labelID)), "a second link is not")
      try await store.link(labeling(11, "blue"), \.messageID, \.labelID)
      try await store.link(labeling(21, "red"), \.messageID, \.labelID)
      try await expectThrows(.referenceViolation, "linking a missing label") {
        try await store.link(labeling(11, "green"), \.messageID, \.labelID)
      }
      let labels = try await store.linked(
        RefLabel.self, from: Int64(11), through: \RefLabeling.messageID, to: \.labelID)
      try expectEqual(labels.map(\.id), ["blue", "red"], "labels of message 11")
      try expectEqual(
        try await store.unlink(RefLabeling.self, \.messageID, 11, \.labelID, "blue"), 1, "unlinked")
      try expectEqual(
        try await store.unlink(RefLabeling.self, \.messageID, 11, \.labelID, "blue"), 0, "unlinked again")
      try await store.delete(RefLabel.self, id: "red")
      try expectEqual(
        try await store.query(RefLabeling.self).count(), 0, "links after deleting the red label")
      try await store.link(labeling(12, "blue"), \.messageID, \.labelID)
      try await store.delete(RefThread.self, id: 1)
      try expectEqual(
        try await store.query(RefLabeling.self).count(), 0, "links after deleting message 12's thread")
    },
    ConformanceCheck(
      "references.eager-loading", requires: .preconditions,
      "including(_:) returns each parent in the query's order with its children, sorted and limited per parent, "
        + "and parents without children with none."
    ) { context in
      let store = try await storeWithThreads(context)
      try await store.insert(RefMessage(id: 13, threadID: 1, text: "c", read: false))
      let all = try await store.query(RefThread.self).sort(\.id, .descending).including(\RefMessage.threadID)
        .fetch()
      try expectEqual(all.map(\.parent.id), [3, 2, 1], "parents in the query's order")
      try expectEqual(all.map { $0.children.map(\.id) }, [[], [21], [11, 12, 13]], "children by id")
      let newest = try await store.query(RefThread.self).filter(\.id <= 2)
        .including(\RefMessage.threadID, limit: 2) { $0.sort(\.text, .descending) }.fetch()
      try expectEqual(
        newest.map { $0.children.map(\.id) }, [[13, 12], [21]], "the last two children by text")
      let grouped = try await store.query(RefThread.self).including(\RefMessage.threadID, limit: 1).grouped()
      try expectEqual(grouped[1]?.map(\.id), [11], "thread 1's first message")
      try expectEqual(grouped[3]?.map(\.id), [], "thread 3 has no messages")
      let notes = try await context.store(with: refThreads(2))
      try await notes.insert([RefNote(id: 1, threadID: 2, text: ""), RefNote(id: 2, threadID: nil, text: "")])
      let withNotes = try await notes.query(RefThread.self).including(\RefNote.threadID).fetch()
      try expectEqual(
        withNotes.map { $0.children.map(\.id) }, [[], [1]], "children through an optional reference")
    },
    ConformanceCheck(
      "references.eager-loading-many-parents", requires: .preconditions,
      "including(_:) gives every one of more parents than one call reads their children for exactly its own."
    ) { context in
      let store = try await context.store(with: refThreads(1_200))
      try await store.insert(
        (1...Int64(1_200)).map { RefMessage(id: $0, threadID: 1_201 - $0, text: "", read: false) })
      let pairs = try await store.query(RefThread.self).including(\RefMessage.threadID).fetch()
      try expectEqual(pairs.count, 1_200, "parents")
      let wrong = pairs.filter { $0.children.map(\.id) != [1_201 - $0.parent.id] }.map(\.parent.id)
      try expectEqual(wrong, [], "parents with the wrong children")
    },
  ]

  static let referenceConcurrencyChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.concurrent-writers", requires: .preconditions,
      "Writers adding rows that refer to threads while others delete the threads never leave a row referring to "
        + "a missing thread, under cascade, nullify and deny."
    ) { context in
      let store = try await context.store(with: refThreads(30))
      try await store.prepare([RefMessage.self, RefNote.self, RefPin.self])
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in Int64(0)..<3 {
          group.addTask {
            for n in Int64(0)..<30 {
              let id = writer * 100 + n
              let thread = 1 + (n * 7 + writer) % 30
              try await racing {
                try await store.insert(RefMessage(id: id, threadID: thread, text: "", read: false))
              }
              try await racing { try await store.insert(RefNote(id: id, threadID: thread, text: "")) }
              try await racing { try await store.insert(RefPin(id: id, threadID: thread)) }
            }
          }
        }
        group.addTask {
          for thread in Int64(1)...30 where thread % 3 != 0 {
            try await racing { try await store.delete(RefThread.self, id: thread) }
            try await racing {
              try await store.batch { batch in
                try batch.deleteAll(RefPin.self, where: \.threadID == thread)
                try batch.delete(RefThread.self, id: thread)
              }
            }
          }
        }
        try await group.waitForAll()
      }
      try expectEqual(
        try await danglingReferences(RefMessage.self, in: store) { $0.threadID }, [], "dangling messages")
      try expectEqual(
        try await danglingReferences(RefNote.self, in: store) { $0.threadID }, [], "dangling notes")
      try expectEqual(
        try await danglingReferences(RefPin.self, in: store) { $0.threadID }, [], "dangling pins")
      try expect(try await store.query(RefMessage.self).count() > 0, "some messages were stored")
    },
    ConformanceCheck(
      "references.concurrent-cascade", requires: .preconditions,
      "Writers adding messages to threads while another deletes the threads one by one (a cascade to rows "
        + "nothing refers to) never leave a message referring to a missing thread."
    ) { context in
      let store = try await context.store(with: refThreads(60))
      try await store.prepare([RefMessage.self])
      try await withThrowingTaskGroup(of: Void.self) { group in
        for writer in Int64(0)..<4 {
          group.addTask {
            for n in Int64(0)..<60 {
              let message = RefMessage(id: writer * 1_000 + n, threadID: 1 + n, text: "", read: false)
              try await racing { try await store.insert(message) }
            }
          }
        }
        group.addTask {
          for thread in Int64(1)...60 {
            try await racing { try await store.delete(RefThread.self, id: thread) }
          }
        }
        try await group.waitForAll()
      }
      try expectEqual(
        try await danglingReferences(RefMessage.self, in: store) { $0.threadID }, [], "dangling messages")
    },
    ConformanceCheck(
      "references.concurrent-handles", requires: [.multiProcess, .preconditions],
      "Two handles on one store, one adding messages and one deleting their threads by filter, never leave a "
        + "message referring to a missing thread."
    ) { context in
      let store = try await context.store(with: refThreads(40))
      try await store.prepare([RefMessage.self])
      let other = try await context.secondHandle(store)
      try await other.prepare([RefThread.self, RefMessage.self])
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for n in Int64(0)..<80 {
            try await racing {
              try await store.insert(RefMessage(id: n, threadID: 1 + n % 40, text: "", read: false))
            }
          }
        }
        group.addTask {
          for start in stride(from: Int64(1), through: 40, by: 4) {
            try await racing {
              _ = try await other.query(RefThread.self).filter(\.id >= start && \.id < start + 2).delete()
            }
          }
        }
        try await group.waitForAll()
      }
      try expectEqual(
        try await danglingReferences(RefMessage.self, in: store) { $0.threadID }, [], "dangling messages")
    },
  ]
}
