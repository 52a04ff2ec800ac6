@_spi(Backend) import Coffer

extension ConformanceSuite {
  static let batchChecks: [ConformanceCheck] = batchOperationChecks + batchUniqueRunChecks

  static let batchOperationChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "batch.duplicate-insert-applies-nothing", "A batch with a duplicate insert anywhere applies nothing."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await expectThrows(.duplicateID, "batch inserting 20, updating 1, then inserting 3 again") {
        try await store.batch { batch in
          try batch.insert(Item(id: 20, name: "new", rank: nil, score: nil, flag: true))
          try batch.update(Item(id: 1, name: "changed", rank: nil, score: nil, flag: false))
          try batch.insert(Item(id: 3, name: "dup", rank: nil, score: nil, flag: true))
        }
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed batch")
    },
    ConformanceCheck(
      "batch.insert-many-duplicate-applies-nothing",
      "Inserting many values at once, one of them with a stored id, inserts none of them."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let fresh = (Int64(200)..<260).map { Item(id: $0, name: "n\($0)", rank: $0, score: nil, flag: true) }
      try await expectThrows(.duplicateID, "insert of ids 200–259 with 3 in the middle") {
        try await store.insert(
          Array(fresh[..<30]) + [Item(id: 3, name: "dup", rank: nil, score: nil, flag: true)] + fresh[30...])
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed insert")
    },
    ConformanceCheck(
      "batch.insert-many-invalid-value-applies-nothing",
      "Inserting many values at once, one of them unencodable (NaN), inserts none of them."
    ) { context in
      let store = try await context.store(with: Item.sample)
      var values = (Int64(300)..<340).map { Item(id: $0, name: "n\($0)", rank: $0, score: 1.5, flag: false) }
      values[25].score = .nan
      try await expectThrows(.invalidValue, "insert of ids 300–339 with a NaN score at 325") {
        try await store.insert(values)
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed insert")
    },
    ConformanceCheck(
      "batch.insert-many-first-failure-decides",
      "Inserting many values at once, the first value that fails decides the error: a stored id before an "
        + "unencodable value is duplicateID naming that id, and the reverse is invalidValue; none is inserted."
    ) { context in
      let store = try await context.store(with: Item.sample)
      var values = (Int64(400)..<440).map { Item(id: $0, name: "n\($0)", rank: $0, score: 1.5, flag: false) }
      values[10] = Item(id: 3, name: "dup", rank: nil, score: nil, flag: true)
      values[25].score = .nan
      let duplicate = try await expectThrows(.duplicateID, "insert with a stored id at 10 and a NaN at 25") {
        try await store.insert(values)
      }
      try expectEqual(duplicate.entity, "Item", "error.entity")
      try expectEqual(duplicate.id, "3", "error.id")
      values[10] = Item(id: 410, name: "n410", rank: 410, score: 1.5, flag: false)
      values[5].score = .nan
      values[30] = Item(id: 3, name: "dup", rank: nil, score: nil, flag: true)
      try await expectThrows(.invalidValue, "insert with a NaN at 5 and a stored id at 30") {
        try await store.insert(values)
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed inserts")
    },
    ConformanceCheck(
      "batch.duplicate-within-batch",
      "Inserting one id twice in the same batch is a duplicate and applies nothing."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await expectThrows(.duplicateID, "batch inserting 30 twice") {
        try await store.batch { batch in
          try batch.insert(Item(id: 30, name: "a", rank: nil, score: nil, flag: true))
          try batch.insert(Item(id: 30, name: "b", rank: nil, score: nil, flag: true))
        }
      }
      try expectEqual(try await store.get(Item.self, id: 30), nil, "get(30) after the failed batch")
    },
    ConformanceCheck(
      "batch.update-missing-applies-nothing", "A batch updating an id that is not stored applies nothing."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await expectThrows(.notFound, "batch deleting 2 then updating 77") {
        try await store.batch { batch in
          try batch.delete(Item.self, id: 2)
          try batch.update(Item(id: 77, name: "ghost", rank: nil, score: nil, flag: true))
        }
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed batch")
    },
    ConformanceCheck(
      "batch.updates-then-missing-applies-nothing",
      "A batch of only updates, whose last id is not stored, fails with notFound naming that id and leaves the "
        + "ids before it unchanged; so do runs of upserts and deletes followed by a failing update."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let error = try await expectThrows(.notFound, "batch updating 1, 2, 3 then 77") {
        try await store.batch { batch in
          for id in [1, 2, 3, 77] as [Int64] {
            try batch.update(Item(id: id, name: "changed", rank: nil, score: nil, flag: true))
          }
        }
      }
      try expectEqual(error.idValue, .int(77), "the missing id the error names")
      let second = try await expectThrows(.notFound, "batch updating 4, 77, 5, 88") {
        try await store.batch { batch in
          for id in [4, 77, 5, 88] as [Int64] {
            try batch.update(Item(id: id, name: "changed", rank: nil, score: nil, flag: true))
          }
        }
      }
      try expectEqual(second.idValue, .int(77), "the first missing id in the batch's order")
      try await expectThrows(.notFound, "batch upserting 90, 91, deleting 1, 2, then updating 77") {
        try await store.batch { batch in
          try batch.upsert(Item(id: 90, name: "new", rank: nil, score: nil, flag: true))
          try batch.upsert(Item(id: 91, name: "new", rank: nil, score: nil, flag: true))
          try batch.delete(Item.self, id: 1)
          try batch.delete(Item.self, id: 2)
          try batch.update(Item(id: 77, name: "ghost", rank: nil, score: nil, flag: true))
        }
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed batches")
    },
    ConformanceCheck(
      "batch.unique-violation-applies-nothing", "A batch that breaks a unique index anywhere applies nothing."
    ) { context in
      let store = try await context.store(with: [Account(id: 1, email: "a@x", name: "A")])
      try await expectThrows(.uniqueViolation, "batch inserting 2 (b@x) and 3 (a@x)") {
        try await store.batch { batch in
          try batch.insert(Account(id: 2, email: "b@x", name: "B"))
          try batch.insert(Account(id: 3, email: "a@x", name: "C"))
        }
      }
      try expectEqual(try await store.all(Account.self).map(\.id), [1], "Account ids after the failed batch")
    },
    ConformanceCheck(
      "batch.late-failure-undoes-everything",
      "A failure at the end of a long batch undoes its inserts, updates, upserts and deletes."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await expectThrows(.notFound, "long batch ending in an update of a missing id") {
        try await store.batch { batch in
          for id in Int64(100)..<150 {
            try batch.insert(Item(id: id, name: "n", rank: id, score: nil, flag: true))
          }
          try batch.update(Item(id: 2, name: "u", rank: 1, score: 1, flag: true))
          try batch.upsert(Item(id: 4, name: "v", rank: nil, score: nil, flag: true))
          try batch.delete(Item.self, id: 5)
          try batch.deleteAll(Item.self, where: FieldRef("flag") == true)
          try batch.update(Item(id: 999, name: "missing", rank: nil, score: nil, flag: true))
        }
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "all() after the failed batch")
    },
    ConformanceCheck(
      "batch.cross-entity-failure-applies-nothing", requires: .crossEntityTransactions,
      "A batch over two entities that fails in one applies nothing in either."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await store.insert(Account(id: 1, email: "a@x", name: "A"))
      try await expectThrows(.uniqueViolation, "batch changing Item and then breaking Account's unique email")
      {
        try await store.batch { batch in
          try batch.insert(Item(id: 50, name: "x", rank: nil, score: nil, flag: true))
          try batch.delete(Item.self, id: 1)
          try batch.insert(Account(id: 2, email: "a@x", name: "B"))
        }
      }
      try expectEqual(try await store.all(Item.self), Item.sample, "Items after the failed batch")
      try expectEqual(try await store.query(Account.self).count(), 1, "Account count after the failed batch")
    },
    ConformanceCheck(
      "batch.ops-apply-in-order", "Operations in a batch apply in order, each seeing the ones before it."
    ) { context in
      let store = try await context.store(with: [Item]())
      try await store.batch { batch in
        try batch.insert(Item(id: 1, name: "first", rank: 1, score: nil, flag: true))
        try batch.update(Item(id: 1, name: "second", rank: 2, score: nil, flag: true))
        try batch.insert(Item(id: 2, name: "gone", rank: nil, score: nil, flag: false))
        try batch.delete(Item.self, id: 2)
        try batch.insert(Item(id: 2, name: "back", rank: nil, score: nil, flag: false))
        try batch.insert(Item(id: 3, name: "matched", rank: nil, score: nil, flag: true))
        try batch.deleteAll(Item.self, where: FieldRef("name") == "matched")
        try batch.upsert(Item(id: 1, name: "third", rank: 3, score: nil, flag: true))
      }
      let names = try await store.all(Item.self).map(\.name)
      try expectEqual(names, ["third", "back"], "names after the batch")
    },
    ConformanceCheck(
      "batch.unique-checked-per-op",
      "A unique value freed earlier in a batch may be taken later in the same batch."
    ) { context in
      let store = try await context.store(with: [
        Account(id: 1, email: "a@x", name: "A"), Account(id: 2, email: "b@x", name: "B"),
      ])
      try await store.batch { batch in
        try batch.update(Account(id: 1, email: "c@x", name: "A"))
        try batch.update(Account(id: 2, email: "a@x", name: "B"))
        try batch.delete(Account.self, id: 1)
        try batch.insert(Account(id: 3, email: "c@x", name: "C"))
      }
      let emails = try await store.all(Account.self).map(\.email)
      try expectEqual(emails, ["a@x", "c@x"], "emails after the batch")
    },
    ConformanceCheck(
      "batch.error-names-entity-id-field",
      "A failed batch's error names the entity, the id and the unique fields."
    ) { context in
      let store = try await context.store(with: [Account(id: 1, email: "a@x", name: "A")])
      let error = try await expectThrows(.uniqueViolation, "inserting Account 2 with a taken email") {
        try await store.insert(Account(id: 2, email: "a@x", name: "B"))
      }
      try expectEqual(error.entity, "Account", "error.entity")
      try expectEqual(error.id, "2", "error.id")
      try expect(
        error.field?.contains("email") == true,
        "error.field: expected it to name email, got \(show(error.field))")
    },
    ConformanceCheck(
      "batch.summary-counts", "apply reports how many rows were inserted, updated and deleted."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let summary = try await store.batch { batch in
        try batch.insert(Item(id: 10, name: "n", rank: nil, score: nil, flag: true))
        try batch.upsert(Item(id: 11, name: "n", rank: nil, score: nil, flag: true))
        try batch.upsert(Item(id: 1, name: "n", rank: nil, score: nil, flag: true))
        try batch.update(Item(id: 2, name: "n", rank: nil, score: nil, flag: true))
        try batch.delete(Item.self, id: 3)
        try batch.delete(Item.self, id: 99)
        try batch.deleteAll(Item.self, where: FieldRef("rank") == 1)
      }
      try expectEqual(summary, ChangeSummary(inserted: 2, updated: 2, deleted: 2), "summary")
    },
    ConformanceCheck(
      "batch.first-use-prepares-types",
      "A batch may use types the store has not seen yet: their entities are prepared before it is applied."
    ) { context in
      let store = try await context.store()
      let accounts = [Account(id: 1, email: "a@x", name: "A"), Account(id: 2, email: nil, name: "B")]
      let summary = try await store.batch { batch in
        try batch.insert(Item.sample[0])
        for account in accounts { try batch.insert(account) }
      }
      try expectEqual(summary.inserted, 3, "rows inserted")
      try expectEqual(try await store.all(Item.self), [Item.sample[0]], "items")
      try expectEqual(try await store.all(Account.self), accounts, "accounts")
    },
  ]
}
