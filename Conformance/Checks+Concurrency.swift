@_spi(Backend) import Coffer
import Synchronization

/// A flag that writer tasks raise when they are done, so readers know when to stop.
final class DoneFlag: Sendable {
  private let raised = Atomic<Bool>(false)
  var isRaised: Bool { raised.load(ordering: .acquiring) }
  func raise() { raised.store(true, ordering: .releasing) }
}

/// Runs `writers` to completion while `readers` copies of `read` run until they finish.
func whileWriting(
  readers: Int, _ write: @escaping @Sendable () async throws -> Void,
  read: @escaping @Sendable () async throws -> Void
) async throws {
  let done = DoneFlag()
  try await withThrowingTaskGroup(of: Void.self) { group in
    group.addTask {
      defer { done.raise() }
      try await write()
    }
    for _ in 0..<readers {
      group.addTask {
        repeat {
          try await read()
          await Task.yield()
        } while !done.isRaised
      }
    }
    try await group.waitForAll()
  }
}

extension ConformanceSuite {
  static let concurrencyChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "concurrency.failing-batches-stay-apart",
      "Batches applied at once by many tasks, some of which fail (a stored id, a missing id, a taken "
        + "unique value), each apply whole or not at all, and each caller gets its own batch's outcome."
    ) { context in
      let store = try await context.store(with: [Account(id: 0, email: "taken@example.com", name: "held")])
      let outcomes = try await withThrowingTaskGroup(of: [(id: Int64, failure: CofferError.Code?)].self) {
        group in
        for writer in 0..<8 {
          group.addTask {
            var outcomes: [(id: Int64, failure: CofferError.Code?)] = []
            for n in 0..<30 {
              let id = Int64(writer * 1000 + n * 2 + 1)
              let fault = (writer + n) % 4
              do {
                try await store.batch { batch in
                  try batch.insert(Account(id: id, email: "\(id)@example.com", name: "first"))
                  try batch.insert(Account(id: id + 1, email: nil, name: "second"))
                  switch fault {
                  case 1: try batch.insert(Account(id: 0, email: nil, name: "a stored id"))
                  case 2: try batch.update(Account(id: -id, email: nil, name: "a missing id"))
                  case 3: try batch.update(Account(id: id + 1, email: "taken@example.com", name: "taken"))
                  default: try batch.update(Account(id: id + 1, email: nil, name: "changed"))
                  }
                }
                outcomes.append((id, nil))
              } catch let error as CofferError {
                outcomes.append((id, error.code))
              }
            }
            return outcomes
          }
        }
        var all: [(id: Int64, failure: CofferError.Code?)] = []
        for try await outcomes in group { all += outcomes }
        return all
      }
      try expectEqual(outcomes.count, 240, "batches applied or refused")
      for (id, failure) in outcomes {
        let stored = try await store.get(Account.self, ids: [id, id + 1])
        let writer = Int(id / 1000)
        let n = Int((id % 1000 - 1) / 2)
        let expected: CofferError.Code? =
          switch (writer + n) % 4 {
          case 1: .duplicateID
          case 2: .notFound
          case 3: .uniqueViolation
          default: nil
          }
        try expectEqual(failure, expected, "the outcome of batch \(id)")
        if expected == nil {
          try expectEqual(
            stored,
            [
              Account(id: id, email: "\(id)@example.com", name: "first"),
              Account(id: id + 1, email: nil, name: "changed"),
            ], "the values of batch \(id), which applied")
        } else {
          try expectEqual(stored, [], "the values of batch \(id), which was refused")
        }
      }
      try expectEqual(
        try await store.query(Account.self).count(), 1 + 2 * outcomes.filter { $0.failure == nil }.count,
        "values stored after every batch")
    },
    ConformanceCheck(
      "concurrency.parallel-writers", "Many tasks inserting at once while others read lose no row."
    ) { context in
      let store = try await context.store(with: [Item]())
      try await whileWriting(readers: 3) {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for writer in 0..<8 {
            group.addTask {
              for n in 0..<40 {
                let id = Int64(writer * 1000 + n)
                try await store.insert(
                  Item(id: id, name: "w\(writer)", rank: Int64(n), score: nil, flag: true))
              }
            }
          }
          try await group.waitForAll()
        }
      } read: {
        let count = try await store.query(Item.self).count()
        try expect((0...320).contains(count), "count while writing: expected 0...320, got \(count)")
      }
      try expectEqual(try await store.query(Item.self).count(), 320, "count after all writers finished")
      for writer in 0..<8 {
        try expectEqual(
          try await store.query(Item.self).filter(FieldRef("name") == "w\(writer)").count(), 40,
          "rows of writer \(writer)")
      }
    },
    ConformanceCheck(
      "concurrency.no-half-batches",
      "A reader never sees half of a batch: rows written together appear together."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0), Versioned(id: 2, version: 0)])
      try await store.prepare([Item.self])
      try await whileWriting(readers: 3) {
        for version in Int64(1)...60 {
          try await store.batch { batch in
            try batch.update(Versioned(id: 1, version: version))
            try batch.insert(Item(id: 2 * version, name: "pair", rank: version, score: nil, flag: true))
            try batch.insert(Item(id: 2 * version + 1, name: "pair", rank: version, score: nil, flag: false))
            try batch.update(Versioned(id: 2, version: version))
          }
        }
      } read: {
        let versions = try await store.all(Versioned.self).map(\.version)
        try expect(
          versions.count == 2 && versions[0] == versions[1],
          "versions of a pair updated together: \(versions)")
        let items = try await store.all(Item.self)
        let ids = Set(items.map(\.id))
        for item in items where !ids.contains(item.id ^ 1) {
          throw CheckFailure("Item \(item.id) is visible without \(item.id ^ 1), inserted in the same batch")
        }
      }
      try expectEqual(try await store.query(Item.self).count(), 120, "items after all batches")
    },
  ]

  static let scaleChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "scale.ten-thousand-rows",
      "10,000 rows inserted in one batch count, filter, sort, page and delete correctly."
    ) { context in
      let items: [Item] = (0..<10_000).map { (n: Int) -> Item in
        let rank: Int64? = n % 7 == 0 ? nil : Int64(n % 100)
        return Item(
          id: Int64(n), name: "item\(9_999 - n)", rank: rank, score: Double(n) / 4, flag: n % 2 == 0)
      }
      let store = try await context.store(with: items)
      try expectEqual(try await store.query(Item.self).count(), 10_000, "count()")
      let range = FieldRef("rank") >= 10 && FieldRef("rank") < 20
      try expectEqual(
        try await store.query(Item.self).filter(range).count(),
        items.filter { (10..<20).contains($0.rank ?? -1) }.count, "count(10 <= rank < 20)")
      try await expectIDs(
        store.query(Item.self).sort(\.score, .descending).limit(3), [9_999, 9_998, 9_997],
        "top 3 by score")
      let byName = items.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }.map(\.id)
      try await expectIDs(
        store.query(Item.self).sort(\.name).offset(5_000).limit(3),
        Array(byName[5_000..<5_003]),
        "names page at 5000")
      try expectEqual(
        try await store.query(Item.self).filter(FieldRef("flag") == true).delete(), 5_000, "delete(flag)")
      try expectEqual(try await store.query(Item.self).count(), 5_000, "count after deleting half")
    }
  ]
}
