@_spi(Backend) import Coffer
import Synchronization

/// Counts how many times a transaction body ran.
final class RunCounter: Sendable {
  private let count = Atomic<Int>(0)
  var value: Int { count.load(ordering: .acquiring) }
  @discardableResult func next() -> Int { count.add(1, ordering: .acquiringAndReleasing).newValue }
}

extension ConformanceSuite {
  /// How many tasks the lost-update and transfer checks run at once.
  static let contenders = 8

  static let transactionChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "transaction.no-lost-update", requires: .preconditions,
      "8 tasks each making 500 modify increments of one counter end at exactly 4,000."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      let perTask = 500
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<contenders {
          group.addTask {
            for _ in 0..<perTask { try await store.modify(Versioned.self, id: 1) { $0.version += 1 } }
          }
        }
        try await group.waitForAll()
      }
      try expectEqual(
        try await store.get(Versioned.self, id: 1)?.version, Int64(contenders * perTask),
        "the counter after \(contenders) tasks × \(perTask) increments")
    },
    ConformanceCheck(
      "transaction.transfer-invariant", requires: [.preconditions, .snapshots],
      "Tasks moving amounts between 100 accounts with transactions never change the total that "
        + "every snapshot read sums to."
    ) { context in
      let accounts = (1...100).map { Item(id: Int64($0), name: "account", rank: 100, score: nil, flag: true) }
      let store = try await context.store(with: accounts)
      let total: Int64 = 100 * 100
      let snapshots = RunCounter()
      try await whileWriting(readers: 2) {
        try await withThrowingTaskGroup(of: Void.self) { group in
          for task in 0..<4 {
            group.addTask {
              var random = SplitMix64(seed: UInt64(task + 1))
              for _ in 0..<60 { try await transfer(in: store, accounts: 100, random: &random) }
            }
          }
          try await group.waitForAll()
        }
      } read: {
        let sum = try await store.snapshot { snapshot in
          try await snapshot.query(Item.self).fetch().reduce(Int64(0)) { $0 + ($1.rank ?? 0) }
        }
        snapshots.next()
        try expectEqual(sum, total, "the sum of all balances in one snapshot while transfers run")
      }
      let final = try await store.all(Item.self)
      try expectEqual(final.count, 100, "accounts after the transfers")
      try expectEqual(final.reduce(Int64(0)) { $0 + ($1.rank ?? 0) }, total, "the sum after the transfers")
      try expect(snapshots.value > 0, "no snapshot read ran while the transfers did")
    },
    ConformanceCheck(
      "transaction.failed-precondition-applies-nothing", requires: .preconditions,
      "A batch whose precondition no longer holds applies none of its operations and fails with "
        + "conflict naming the entity and id."
    ) { context in
      let store = try await context.store(with: [Item(id: 1, name: "a", rank: 1, score: nil, flag: true)])
      let schema = try schemaOf(Item.self, in: store)
      let asRead = try encoded(Item(id: 1, name: "a", rank: 1, score: nil, flag: true))
      try await store.update(Item(id: 1, name: "a", rank: 2, score: nil, flag: true))
      let insert = ChangeSet.Operation.insert(
        entity: "Item", row: try encoded(Item(id: 2, name: "b", rank: nil, score: nil, flag: false)))
      let cases: [(String, ChangeSet.Precondition, Value?)] = [
        ("unchanged (the row changed)", .unchanged(asRead, in: schema), .int(1)),
        ("absent (the id is stored)", .absent(.int(1), in: schema), .int(1)),
        ("present (the id is not stored)", .present(.int(9), in: schema), .int(9)),
        (
          "matching (the row no longer matches)", .matching(.int(1), FieldRef("rank") == 1, in: schema),
          .int(1)
        ),
        (
          "a query's rows (one was added)",
          ChangeSet.Precondition(Query(entity: "Item", filter: FieldRef("rank") >= 0), .rows([])), .int(1)
        ),
      ]
      for (what, precondition, id) in cases {
        let error = try await expectThrows(.conflict, "a batch with precondition \(what)") {
          try await store.apply(ChangeSet([insert], layouts: ["Item": schema], preconditions: [precondition]))
        }
        try expectEqual(error.entity, "Item", "the entity the conflict names (\(what))")
        try expectEqual(error.idValue, id, "the id the conflict names (\(what))")
        try expectEqual(try await store.query(Item.self).count(), 1, "rows after the refused batch (\(what))")
      }
      let current = try encoded(Item(id: 1, name: "a", rank: 2, score: -0.0, flag: true))
      try await store.update(Item(id: 1, name: "a", rank: 2, score: -0.0, flag: true))
      let zero = try encoded(Item(id: 1, name: "a", rank: 2, score: 0.0, flag: true))
      _ = try await expectThrows(.conflict, "a precondition that 0.0 is still stored where -0.0 is") {
        try await store.apply(
          ChangeSet([insert], layouts: ["Item": schema], preconditions: [.unchanged(zero, in: schema)]))
      }
      let held: [ChangeSet.Precondition] = [
        .unchanged(current, in: schema), .absent(.int(2), in: schema), .present(.int(1), in: schema),
        .matching(.int(1), FieldRef("rank") == 2, in: schema),
        ChangeSet.Precondition(Query(entity: "Item", filter: FieldRef("rank") >= 0), .count(1)),
      ]
      let summary = try await store.apply(ChangeSet([insert], layouts: ["Item": schema], preconditions: held))
      try expectEqual(summary.inserted, 1, "rows inserted by a batch whose preconditions all hold")
      try expectEqual(try await store.query(Item.self).count(), 2, "rows after the batch that applied")
    },
    ConformanceCheck(
      "transaction.write-back-if-unchanged", requires: .preconditions,
      "A batch that updates or deletes the one row it read, on the condition that the row is unchanged, "
        + "applies when every value of every kind still holds (nulls and extremes too) and fails with "
        + "conflict naming the id when one value changed (-0.0 for 0.0 too) or the row was removed."
    ) { context in
      let (store, schema, level, double) = try await everyKindStore(context)
      let layouts = ["Every": schema]
      var everything = Query(entity: "Every", sort: [Sort("id")])
      everything.layout = schema
      func stored(_ id: Value) async throws -> Row? {
        let rows = try await store.getRows(entity: "Every", ids: [id])
        return rows.first
      }
      for asRead in try await store.fetchRows(everything) {
        let id = asRead[schema.idPosition]
        var written = asRead
        written.values[level] = .int(1_000)
        let summary = try await store.apply(
          ChangeSet(
            [.update(entity: "Every", row: written)], layouts: layouts,
            preconditions: [.unchanged(asRead, in: schema)]
          ))
        try expectEqual(summary.updated, 1, "rows updated when \(id) is as read")
        try expectEqual(try await stored(id), written, "row \(id) after its update as read")
        var again = asRead
        again.values[level] = .int(2_000)
        let refused = try await expectThrows(.conflict, "an update of \(id) on its read from before") {
          try await store.apply(
            ChangeSet(
              [.update(entity: "Every", row: again)], layouts: layouts,
              preconditions: [.unchanged(asRead, in: schema)]))
        }
        try expectEqual(refused.entity, "Every", "the entity the conflict names")
        try expectEqual(refused.idValue, id, "the id the conflict names")
        _ = try await expectThrows(.conflict, "a delete of \(id) on its read from before") {
          try await store.apply(
            ChangeSet(
              [.delete(entity: "Every", id: id)], layouts: layouts,
              preconditions: [.unchanged(asRead, in: schema)]))
        }
        try expectEqual(try await stored(id), written, "row \(id) after the refused update and delete")
      }
      let negativeZero = try await store.fetchRows(everything).first {
        if case .double(let value) = $0[double] { return value == 0 && value.sign == .minus }
        return false
      }
      guard let negativeZero else { throw CheckFailure("the fixture holds no -0.0 double") }
      let id = negativeZero[schema.idPosition]
      var zero = negativeZero
      zero.values[double] = .double(0.0)
      _ = try await expectThrows(.conflict, "an update on a read of 0.0 where -0.0 is stored") {
        try await store.apply(
          ChangeSet(
            [.update(entity: "Every", row: zero)], layouts: layouts,
            preconditions: [.unchanged(zero, in: schema)]))
      }
      guard let kept = try await stored(id), case .double(let value) = kept[double], value.sign == .minus
      else {
        throw CheckFailure("-0.0 did not stay stored after the refused update")
      }
      try await store.apply(ChangeSet([.delete(entity: "Every", id: id)], layouts: layouts))
      let gone = try await expectThrows(.conflict, "an update of a row removed since it was read") {
        try await store.apply(
          ChangeSet(
            [.update(entity: "Every", row: negativeZero)], layouts: layouts,
            preconditions: [.unchanged(negativeZero, in: schema)]))
      }
      try expectEqual(gone.idValue, id, "the id the conflict about a removed row names")
      try expectEqual(try await stored(id), nil, "the removed row after the refused update")
      let left = try await store.fetchRows(everything)
      for asRead in left {
        let summary = try await store.apply(
          ChangeSet(
            [.delete(entity: "Every", id: asRead[schema.idPosition])], layouts: layouts,
            preconditions: [.unchanged(asRead, in: schema)]))
        try expectEqual(summary.deleted, 1, "rows deleted when \(asRead[schema.idPosition]) is as read")
      }
      try expectEqual(try await store.countRows(everything), 0, "rows left after deleting each as read")
    },
    ConformanceCheck(
      "transaction.write-back-rows-if-unchanged", requires: .preconditions,
      "A batch that writes back every row it read, on the condition that they are all unchanged, "
        + "applies when every value of every kind still holds, and applies none of its operations and "
        + "fails with conflict naming the id when one row changed (-0.0 for 0.0 too) — with updates "
        + "alone, and with a delete among them."
    ) { context in
      let (store, schema, level, double) = try await everyKindStore(context)
      let layouts = ["Every": schema]
      var everything = Query(entity: "Every", sort: [Sort("id")])
      everything.layout = schema
      func leveled(_ rows: [Row], _ value: Int64) -> [Row] {
        rows.map { row in
          var row = row
          row.values[level] = .int(value)
          return row
        }
      }
      func updates(_ rows: [Row]) -> [ChangeSet.Operation] { rows.map { .update(entity: "Every", row: $0) } }
      func asRead(_ rows: [Row]) -> ChangeSet.Precondition {
        ChangeSet.Precondition(Query(lookingUp: rows.map { $0[schema.idPosition] }, in: schema), .rows(rows))
      }
      let read = try await store.fetchRows(everything)
      guard read.count >= 3 else { throw CheckFailure("the fixture holds fewer than 3 Every rows") }
      let summary = try await store.apply(
        ChangeSet(updates(leveled(read, 1_000)), layouts: layouts, preconditions: [asRead(read)]))
      try expectEqual(summary.updated, read.count, "rows updated when all are as read")
      let now = try await store.fetchRows(everything)
      try expectEqual(now, leveled(read, 1_000), "the rows after their update as read")

      let middle = now.count / 2
      var changed = now[middle]
      changed.values[level] = .int(1_001)
      try await store.apply(ChangeSet([.update(entity: "Every", row: changed)], layouts: layouts))
      var expected = now
      expected[middle] = changed
      let refused = try await expectThrows(.conflict, "updates of rows read before one of them changed") {
        try await store.apply(
          ChangeSet(updates(leveled(now, 2_000)), layouts: layouts, preconditions: [asRead(now)]))
      }
      try expectEqual(refused.entity, "Every", "the entity the conflict names")
      try expectEqual(refused.idValue, now[middle][schema.idPosition], "the id the conflict names")
      try expectEqual(try await store.fetchRows(everything), expected, "the rows after the refused updates")

      let last = expected[expected.count - 1][schema.idPosition]
      let withDelete =
        updates(leveled(Array(now.dropLast()), 3_000)) + [.delete(entity: "Every", id: last)]
      let refusedDelete = try await expectThrows(.conflict, "updates and a delete of rows read before") {
        try await store.apply(ChangeSet(withDelete, layouts: layouts, preconditions: [asRead(now)]))
      }
      try expectEqual(refusedDelete.idValue, now[middle][schema.idPosition], "the id the conflict names")
      try expectEqual(try await store.fetchRows(everything), expected, "the rows after the refused delete")

      if let zeroAt = expected.firstIndex(where: {
        if case .double(let value) = $0[double] { return value == 0 && value.sign == .minus }
        return false
      }) {
        var zero = expected
        zero[zeroAt].values[double] = .double(0.0)
        _ = try await expectThrows(.conflict, "updates on a read of 0.0 where -0.0 is stored") {
          try await store.apply(
            ChangeSet(updates(leveled(zero, 4_000)), layouts: layouts, preconditions: [asRead(zero)]))
        }
        try expectEqual(
          try await store.fetchRows(everything), expected, "the rows after the refused -0.0 read")
      } else {
        throw CheckFailure("the fixture holds no -0.0 double")
      }

      let deleted = try await store.apply(
        ChangeSet(
          updates(leveled(Array(expected.dropLast()), 3_000)) + [.delete(entity: "Every", id: last)],
          layouts: layouts, preconditions: [asRead(expected)]))
      try expectEqual(deleted.updated, expected.count - 1, "rows updated beside the delete, all as read")
      try expectEqual(deleted.deleted, 1, "rows deleted beside the updates, all as read")
      try expectEqual(
        try await store.fetchRows(everything), leveled(Array(expected.dropLast()), 3_000),
        "the rows after the updates and the delete")
    },
    ConformanceCheck(
      "transaction.body-error-applies-nothing", requires: .preconditions,
      "A transaction body that throws applies none of its writes and does not run again."
    ) { context in
      struct Refused: Error {}
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      let runs = RunCounter()
      do {
        try await store.transaction { tx in
          runs.next()
          try tx.update(Versioned(id: 1, version: 5))
          try tx.insert(Versioned(id: 2, version: 0))
          throw Refused()
        }
        throw CheckFailure("the transaction returned although its body threw")
      } catch is Refused {}
      try expectEqual(runs.value, 1, "how many times the throwing body ran")
      try expectEqual(
        try await store.all(Versioned.self), [Versioned(id: 1, version: 0)], "the values afterwards")
    },
    ConformanceCheck(
      "transaction.conflict-runs-again", requires: .preconditions,
      "A transaction whose reads change before it commits runs again on fresh reads: a changed "
        + "value, and a value added to a query it counted."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      let runs = RunCounter()
      let seen = try await store.transaction { tx in
        let version = try await tx.get(Versioned.self, id: 1)?.version ?? -1
        if runs.next() == 1 { try await store.update(Versioned(id: 1, version: 10)) }
        try tx.update(Versioned(id: 1, version: version + 1))
        return version
      }
      try expectEqual(runs.value, 2, "runs of a body whose read value changed before the commit")
      try expectEqual(seen, 10, "the value the last run read")
      try expectEqual(try await store.get(Versioned.self, id: 1)?.version, 11, "the value committed")

      let counted = RunCounter()
      let count = try await store.transaction { tx in
        let count = try await tx.query(Versioned.self).filter(FieldRef("version") > 5).count()
        if counted.next() == 1 { try await store.insert(Versioned(id: 2, version: 6)) }
        try tx.insert(Versioned(id: 100 + Int64(counted.value), version: Int64(count)))
        return count
      }
      try expectEqual(counted.value, 2, "runs of a body whose counted query gained a value")
      try expectEqual(count, 2, "the count the last run saw")
      try expectEqual(
        try await store.all(Versioned.self).map(\.id), [1, 2, 102], "the ids after the second run committed")
    },
    ConformanceCheck(
      "transaction.reads-own-writes", requires: .preconditions,
      "Inside a transaction, get sees the transaction's own inserts, updates and deletes; the store "
        + "sees none of them until it commits."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0), Versioned(id: 2, version: 0)])
      try await store.transaction { tx in
        try tx.insert(Versioned(id: 3, version: 3))
        try tx.update(Versioned(id: 1, version: 1))
        try tx.delete(Versioned.self, id: 2)
        try expectEqual(try await tx.get(Versioned.self, id: 3), Versioned(id: 3, version: 3), "an insert")
        try expectEqual(try await tx.get(Versioned.self, id: 1), Versioned(id: 1, version: 1), "an update")
        try expectEqual(try await tx.get(Versioned.self, id: 2), nil, "a delete")
        try expectEqual(
          try await store.all(Versioned.self).map(\.version), [0, 0], "the store before the commit")
      }
      try expectEqual(
        try await store.all(Versioned.self), [Versioned(id: 1, version: 1), Versioned(id: 3, version: 3)],
        "the store after the commit")
    },
    ConformanceCheck(
      "transaction.modify", requires: .preconditions,
      "modify returns the value it stored; an id not stored is notFound; a change that throws stores "
        + "nothing and does not run again; a change that breaks a unique index stores nothing."
    ) { context in
      struct Refused: Error {}
      let store = try await context.store(with: [Versioned(id: 1, version: 1)])
      let stored = try await store.modify(Versioned.self, id: 1) { $0.version *= 7 }
      try expectEqual(stored, Versioned(id: 1, version: 7), "the value modify returned")
      try expectEqual(try await store.get(Versioned.self, id: 1), stored, "the value stored")
      let error = try await expectThrows(.notFound, "modify of an id that is not stored") {
        try await store.modify(Versioned.self, id: 2) { $0.version += 1 }
      }
      try expectEqual(error.idValue, .int(2), "the id notFound names")
      let runs = RunCounter()
      do {
        try await store.modify(Versioned.self, id: 1) { value in
          runs.next()
          value.version = 0
          throw Refused()
        }
        throw CheckFailure("modify returned although its change threw")
      } catch is Refused {}
      try expectEqual(runs.value, 1, "runs of a change that threw")
      try expectEqual(try await store.get(Versioned.self, id: 1), stored, "the value after the change threw")

      let accounts = [
        Account(id: 1, email: "a@example.com", name: "a"), Account(id: 2, email: nil, name: "b"),
      ]
      try await store.insert(accounts)
      let taken = try await expectThrows(.uniqueViolation, "modify that takes another value's unique email") {
        try await store.modify(Account.self, id: 2) { $0.email = "a@example.com" }
      }
      try expectEqual(taken.entity, "Account", "the entity the unique violation names")
      try expectEqual(try await store.all(Account.self), accounts, "the values after the refused modify")
      let renamed = try await store.modify(Account.self, id: 2) { $0.email = "b@example.com" }
      try expectEqual(try await store.get(Account.self, id: 2), renamed, "a modify of a unique field")
    },
    ConformanceCheck(
      "snapshot.isolation", requires: .snapshots,
      "A batch applied while a snapshot is open is invisible to it and visible after it."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let before = try await store.all(Item.self)
      try await store.snapshot { snapshot in
        try expectEqual(
          try await snapshot.query(Item.self).count(), before.count, "the count in the snapshot")
        try await store.batch { batch in
          try batch.insert(Item(id: 900, name: "new", rank: nil, score: nil, flag: true))
          try batch.delete(Item.self, id: before[0].id)
          try batch.update(Item(id: before[1].id, name: "changed", rank: nil, score: nil, flag: false))
        }
        try expectEqual(try await snapshot.query(Item.self).fetch(), before, "the values in the snapshot")
        try expectEqual(try await snapshot.get(Item.self, id: 900), nil, "a value inserted after it began")
        try expectEqual(
          try await snapshot.get(Item.self, id: before[0].id), before[0], "a value deleted after")
        try expectEqual(
          try await snapshot.get(Item.self, ids: [before[1].id, before[0].id]), [before[1], before[0]],
          "values read by ids")
        try expectEqual(
          try await snapshot.query(Item.self).filter(FieldRef("name") == "changed").count(), 0,
          "a count of values changed after it began")
      }
      try expectEqual(try await store.query(Item.self).count(), before.count, "the count after the snapshot")
      try expectEqual(try await store.get(Item.self, id: 900)?.name, "new", "the insert after the snapshot")
    },
    ConformanceCheck(
      "snapshot.first-use-of-a-stored-entity", requires: [.snapshots, .reopenable],
      "A snapshot that is a reopened store's first use of a stored entity reads its values (the "
        + "entity is prepared inside the snapshot)."
    ) { context in
      let first = try await context.store(with: Item.sample)
      let store = try await context.reopen(first)
      let values = try await store.snapshot { snapshot in
        (try await snapshot.query(Item.self).fetch(), try await snapshot.query(Item.self).count())
      }
      try expectEqual(
        values.0.sorted { $0.id < $1.id }, Item.sample.sorted { $0.id < $1.id },
        "the values read in the snapshot")
      try expectEqual(values.1, Item.sample.count, "the count in the snapshot")
    },
    ConformanceCheck(
      "update.by-query", requires: [],
      "An update by query changes the fields of exactly the values its filter selects and returns how "
        + "many; it checks fields and values like any write."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let flagged = try await store.query(Item.self).filter(\.flag == true).fetch()
      let changed = try await store.query(Item.self).filter(\.flag == true).update(\.name, to: "set")
      try expectEqual(changed, flagged.count, "values an update by query reports")
      for item in try await store.all(Item.self) {
        let original = Item.sample.first { $0.id == item.id }
        var expected = original
        if item.flag { expected?.name = "set" }
        try expectEqual(item, expected, "value \(item.id) after the update")
      }
      try expectEqual(
        try await store.query(Item.self).filter(\.flag == true).update([.set("rank", to: .null)]),
        flagged.count,
        "values set to nil")
      try expectEqual(
        try await store.query(Item.self).filter(\.rank != nil && \.flag == true).count(), 0, "ranks left")
      _ = try await expectThrows(.invalidQuery, "an update of the id field") {
        try await store.query(Item.self).update([.set("id", to: .int(5))])
      }
      _ = try await expectThrows(.invalidQuery, "an update of an unknown field") {
        try await store.query(Item.self).update([.set("nope", to: .int(5))])
      }
      _ = try await expectThrows(.invalidValue, "a required field set to nil") {
        try await store.query(Item.self).update([.set("name", to: .null)])
      }
      _ = try await expectThrows(.invalidValue, "adding to a string field") {
        try await store.query(Item.self).update([.add("name", .string("x"))])
      }
      try expectEqual(
        try await store.query(Item.self).filter(\.id == -12345).update(\.name, to: "none"), 0,
        "values changed when none match")
    },
    ConformanceCheck(
      "update.increments-are-exact", requires: [],
      "Increments by query from 8 tasks at once are all counted; one that overflows changes nothing and "
        + "fails with valueOutOfRange."
    ) { context in
      let store = try await context.store(with: (1...3).map { Versioned(id: $0, version: 0) })
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<contenders {
          group.addTask {
            for _ in 0..<50 {
              try await store.query(Versioned.self).filter(\.id <= 2).increment(\.version, by: 1)
            }
          }
        }
        try await group.waitForAll()
      }
      let expected = Int64(contenders * 50)
      try expectEqual(
        try await store.all(Versioned.self).map(\.version), [expected, expected, 0],
        "the counters after \(contenders) tasks × 50 increments of ids 1 and 2")
      try await store.update(Versioned(id: 2, version: Int64.max - 1))
      let error = try await expectThrows(.valueOutOfRange, "an increment past Int64.max") {
        try await store.query(Versioned.self).increment(\.version, by: 2)
      }
      try expectEqual(error.idValue, .int(2), "the id an overflowing increment names")
      try expectEqual(
        try await store.all(Versioned.self).map(\.version), [expected, Int64.max - 1, 0],
        "the counters after the refused increment")
      try expectEqual(
        try await store.query(Versioned.self).increment(\.version, by: -expected), 3,
        "values changed by a negative increment")
      try expectEqual(
        try await store.all(Versioned.self).map(\.version), [0, Int64.max - 1 - expected, -expected],
        "the counters after a negative increment")
    },
    ConformanceCheck(
      "update.by-query-keeps-unique", requires: [],
      "An update by query that would give two values the same unique field fails with uniqueViolation "
        + "and changes nothing."
    ) { context in
      let accounts = [
        Account(id: 1, email: "a@example.com", name: "A"),
        Account(id: 2, email: "b@example.com", name: "B"),
      ]
      let store = try await context.store(with: accounts)
      _ = try await expectThrows(.uniqueViolation, "two accounts set to one email") {
        try await store.query(Account.self).update(\.email, to: "same@example.com")
      }
      try expectEqual(try await store.all(Account.self), accounts, "the accounts after the refused update")
    },
  ]

  /// Moves a random amount between two of the accounts 1…`accounts` (`Item`s whose rank is
  /// the balance) in one transaction.
  static func transfer(in store: Store, accounts: Int, random: inout SplitMix64) async throws {
    let count = UInt64(accounts)
    let from = Int64(random.next() % count) + 1
    var to = Int64(random.next() % count) + 1
    if to == from { to = from % Int64(accounts) + 1 }
    let amount = Int64(random.next() % 20) + 1
    try await store.transaction { tx in
      guard var source = try await tx.get(Item.self, id: from),
        var target = try await tx.get(Item.self, id: to)
      else { throw CheckFailure("account \(from) or \(to) is missing") }
      source.rank = (source.rank ?? 0) - amount
      target.rank = (target.rank ?? 0) + amount
      try tx.update(source)
      try tx.update(target)
    }
  }

  /// The schema a type's entity is prepared with in a store.
  private static func schemaOf<T: Storable>(_ type: T.Type, in store: Store) throws -> EntitySchema {
    guard let schema = store.schema(of: T.entityName) else {
      throw CheckFailure("\(T.entityName) was not prepared")
    }
    return schema
  }

  /// A value as the row its type's codec makes.
  private static func encoded<T: Storable>(_ value: T) throws -> Row {
    try EntityCodec<T>().encode(value)
  }
}

/// A store holding the every-kind fixture, with its `Every` schema and the positions of its
/// `level` and `double` fields: where the write-back checks start.
private func everyKindStore(_ context: CheckContext) async throws
  -> (store: Store, schema: EntitySchema, level: Int, double: Int)
{
  let store = try await context.store()
  try await store.prepare(schemas: EveryKindFixture.schemas)
  try await store.apply(EveryKindFixture.changeSet())
  let schema = EveryKindFixture.schema("Every")
  guard let level = schema.position(of: "level"), let double = schema.position(of: "double") else {
    throw CheckFailure("the fixture's Every has no level or double field")
  }
  return (store, schema, level, double)
}
