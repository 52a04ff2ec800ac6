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
          .including(\RefMessage.threadID, limit: 3) { $0.sort(\.text, .descending) }.fetch()
        try expectEqual(pairs.map(\.parent.id), (1...Int64(count)).reversed(), "\(count) parents, in order")
        for pair in pairs {
          try expectEqual(
            pair.children.map(\.id), try await expected(pair.parent.id),
            "children of thread \(pair.parent.id) among \(count) parents")
        }
      }
    },
    ConformanceCheck(
      "references.eager-loading-shaped-children", requires: .preconditions,
      "including(_:limit:_:) sorts and filters each parent's children by the key paths of the children's "
        + "query it shapes, for a few parents and for many alike."
    ) { context in
      let store = try await context.store(with: refThreads(20))
      var messages: [RefMessage] = []
      for thread in Int64(1)...20 {
        for n in 0..<Int64(6) {
          messages.append(
            RefMessage(id: thread * 100 + n, threadID: thread, text: "m\((n * 5) % 4)", read: n % 3 == 0))
        }
      }
      try await store.insert(messages)
      for count in [2, 20] {
        let pairs = try await store.query(RefThread.self).filter(\.id <= Int64(count)).sort(\.id)
          .including(\RefMessage.threadID, limit: 2) { $0.filter(\.read == false).sort(\.text, .descending) }
          .fetch()
        for pair in pairs {
          let wanted = try await store.query(RefMessage.self)
            .filter(\.threadID == pair.parent.id && \.read == false).sort(\.text, .descending).limit(2)
            .fetch()
          try expectEqual(
            pair.children.map(\.id), wanted.map(\.id),
            "unread children of thread \(pair.parent.id) among \(count) parents")
        }
      }
    },
    ConformanceCheck(
      "references.limit-per-value",
      "A parent's first children by a descending sort break ties by id; a backend that adopts "
        + "LimitPerValueReading keeps exactly those rows of each parent itself (limits 0, 1, 3), in the query's "
        + "order, also when a field is named like the rank it computes."
    ) { context in
      let schema = try EntitySchema(
        name: "Ranked", fields: [Field("id", .int), Field("parent", .int), Field("coffer rank", .int)],
        idField: "id", indexes: [.on("parent")])
      let store = try await context.store()
      try await store.prepare(schemas: [schema])
      // Parent p has p % 6 children; ranks repeat, so the sort has ties broken by id.
      var rows: [Row] = []
      for parent in Int64(1)...40 {
        for n in 0..<(parent % 6) {
          rows.append(Row([.int(parent * 100 + n), .int(parent), .int((n * 7) % 3)]))
        }
      }
      try await store.apply(ChangeSet([.insertMany(entity: "Ranked", rows: RowSource(rows))]))
      let sort = [Sort("coffer rank", ascending: false)]
      func first(_ limit: Int, of parent: Int64) -> [Row] {
        Array(
          rows.filter { $0[1] == .int(parent) }
            .sorted { lhs, rhs in
              let order = ValueOrder.compare(lhs[2], rhs[2])
              return order != 0 ? order > 0 : ValueOrder.compare(lhs[0], rhs[0]) < 0
            }
            .prefix(limit))
      }
      for parent in Int64(1)...40 {
        let limited = try await store.fetchRows(
          Query(entity: "Ranked", filter: FieldRef("parent") == parent, sort: sort, limit: 3))
        try expectEqual(limited, first(3, of: parent), "parent \(parent)'s first rows by a limited query")
      }
      guard let backend = store.backend as? any LimitPerValueReading else { return }
      var query = Query(entity: "Ranked", filter: .isIn("parent", (1...40).map { .int($0) }), sort: sort)
      query.layout = schema
      for limit in [0, 1, 3] {
        var kept: [Row] = []
        try await backend.read(query, first: limit, per: "parent") { fields in
          kept.append(Row(try (0..<3).map { try fields.value(at: $0) }))
        }
        let wanted = (Int64(1)...40).flatMap { first(limit, of: $0) }
        try expectEqual(kept.count, wanted.count, "rows kept with limit \(limit)")
        for parent in Int64(1)...40 {
          try expectEqual(
            kept.filter { $0[1] == .int(parent) }, first(limit, of: parent),
            "parent \(parent)'s rows with limit \(limit)")
        }
        let ranks = kept.map(\.values[2])
        try expect(
          zip(ranks, ranks.dropFirst()).allSatisfy { ValueOrder.compare($0, $1) >= 0 },
          "rows in the query's order (rank descending) with limit \(limit)")
      }
    },
  ]
}
