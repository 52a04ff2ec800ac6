@_spi(Backend) import Coffer
import Foundation

extension ConformanceSuite {
  static let eagerLimitChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.eager-loading-limit-few-or-many", requires: .preconditions,
      "including(_:sort:limit:) gives each parent the first children of its own a limited query gives, in "
        + "sort order with ties by id — for a few parents (read one by one) and for many (read together) alike."
    ) { context in
      let store = try await context.store(with: refThreads(20))
      // Thread t has (t * 3) % 7 messages; texts repeat, so the sort has ties broken by id.
      var messages: [RefMessage] = []
      for thread in Int64(1)...20 {
        for n in 0..<((thread * 3) % 7) {
          messages.append(
            RefMessage(id: thread * 100 + n, threadID: thread, text: "m\((n * 5) % 3)", read: n % 2 == 0))
        }
      }
      try await store.insert(messages)
      func expected(_ thread: Int64) async throws -> [Int64] {
        try await store.query(RefMessage.self).filter(\.threadID == thread).sort(\.text, .descending).limit(3)
          .fetch().map(\.id)
      }
      for count in [2, 20] {
        let pairs = try await store.query(RefThread.self).filter(\.id <= Int64(count)).sort(\.id, .descending)
          .including(\RefMessage.threadID, sort: [Sort("text", ascending: false)], limit: 3).fetch()
        try expectEqual(pairs.map(\.parent.id), (1...Int64(count)).reversed(), "\(count) parents, in order")
        for pair in pairs {
          try expectEqual(
            pair.children.map(\.id), try await expected(pair.parent.id),
            "children of thread \(pair.parent.id) among \(count) parents")
        }
      }
    }
  ]
}
