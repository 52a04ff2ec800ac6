@_spi(Backend) import Coffer
import CofferChildProcess
import Foundation

extension ConformanceSuite {
  static let changeFeedChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "changes.off-until-turned-on", requires: .changeFeed,
      "A store records no change feed until it is turned on: reading it fails with invalidConfiguration, "
        + "and batches committed before it was turned on are not in it."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      do {
        _ = try await batches(of: store)
        throw CheckSkipped(
          "the target's URL turns the change feed on (changes=on): no store starts without one")
      } catch let error as CofferError where error.code == .invalidConfiguration {}
      try await store.recordChanges()
      try expectEqual(try await batches(of: store).count, 0, "batches in a feed just turned on")
      try await store.insert(Versioned(id: 2, version: 0))
      let feed = try await batches(of: store)
      try expectEqual(feed.map { $0.changes.map(\.id) }, [[.int(2)]], "the ids in the feed after one insert")
    },
    ConformanceCheck(
      "changes.on-for-open-handles", requires: [.changeFeed, .observesOtherHandles],
      "Turning the feed on through one handle turns it on for a handle already open and writing: its next "
        + "batch is in the feed, whole, and nothing it committed before is."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      let other = try await context.secondHandle(store)
      try await other.prepare([Versioned.self])
      try await other.update(Versioned(id: 1, version: 1))
      try await store.recordChanges()
      let start = try await store.lastChangePosition()
      try await other.insert([Versioned(id: 2, version: 0), Versioned(id: 3, version: 0)])
      try await other.update(Versioned(id: 1, version: 2))
      let feed = try await batches(of: store, after: start)
      try expectEqual(
        feed.map { $0.changes.map { "\($0.kind.rawValue) \($0.id)" } },
        [["insert 2", "insert 3"], ["update 1"]],
        "the batches the handle opened before the feed was turned on committed after it")
    },
    ConformanceCheck(
      "changes.migration-steps-as-rows", requires: [.changeFeed, .migrations],
      "A migration step that rewrites rows is one batch of the rows it really changed, with their new values "
        + "(a kind change: every row; a custom rewrite dropping rows: their deletes only); a step that only "
        + "renames records nothing."
    ) { context in
      let store = try await context.store(with: (Int64(1)...6).map { Versioned(id: $0, version: $0 * 10) })
      try await store.recordChanges()
      let start = try await store.lastChangePosition()
      try await store.migrate(
        MigrationPlan([
          .changeKind(
            "version-text", entity: "Versioned", field: "version", to: .string, using: .intToString),
          .custom("drop-even") { migration in
            let schema = try migration.schema(of: "Versioned")
            try migration.rewrite("Versioned", as: schema) { record in
              guard case .int(let id)? = record["id"], id % 2 == 0 else { return record }
              return nil
            }
          },
          .renameField("rename-version", entity: "Versioned", from: "version", to: "label"),
        ]))
      let feed = try await batches(of: store, after: start)
      try expectEqual(
        feed.map { $0.changes.map { "\($0.kind.rawValue) \($0.id)" }.sorted() },
        [
          ["update 1", "update 2", "update 3", "update 4", "update 5", "update 6"],
          ["delete 2", "delete 4", "delete 6"],
        ],
        "the batches of the three steps, each row's kind and id (sorted)")
      try expectEqual(
        feed.first?.changes.first { $0.id == .int(3) }?.value(of: "version"), .string("30"),
        "row 3's value after the kind change")
    },
    ConformanceCheck(
      "changes.each-batch-once-in-order", requires: .changeFeed,
      "Each committed batch appears in the feed once, in commit order, with each row it changed once: "
        + "its entity, id, kind and the values it holds afterwards — inserts, updates, upserts, deletes, "
        + "deletes and updates by query alike."
    ) { context in
      let store = try await context.store()
      try await store.prepare([Item.self])
      try await store.recordChanges()
      try await store.insert([
        Item(id: 1, name: "a", rank: 1, score: nil, flag: true),
        Item(id: 2, name: "b", rank: 2, score: 0.5, flag: false),
      ])
      try await store.update(Item(id: 1, name: "a2", rank: 1, score: nil, flag: true))
      try await store.upsert(Item(id: 3, name: "c", rank: nil, score: nil, flag: true))
      try await store.delete(Item.self, id: 2)
      _ = try await store.query(Item.self).filter(\.flag == true).update(\.name, to: "flagged")
      try await store.insert(Item(id: 4, name: "d", rank: 4, score: nil, flag: false))
      _ = try await store.query(Item.self).filter(\.rank >= 4).delete()
      // A batch that adds a row and removes it again changes nothing, and records nothing.
      try await store.batch { batch in
        try batch.insert(Item(id: 9, name: "gone", rank: nil, score: nil, flag: false))
        try batch.delete(Item.self, id: 9)
      }
      // Deleting an id that is not stored changes nothing either.
      try await store.delete(Item.self, id: 77)
      let feed = try await batches(of: store)
      let seen = feed.map { $0.changes.map { "\($0.kind.rawValue) \($0.id)" } }
      let expected: [[String]] = [
        ["insert 1", "insert 2"], ["update 1"], ["insert 3"], ["delete 2"], ["update 1", "update 3"],
        ["insert 4"],
        ["delete 4"],
      ]
      try expectEqual(seen, expected, "the batches of the feed, each row's kind and id")
      try expect(
        zip(feed, feed.dropFirst()).allSatisfy { $0.position < $1.position },
        "positions grow batch by batch: \(feed.map(\.position))")
      let byQuery = feed[4].changes
      try expectEqual(
        byQuery.map { $0.value(of: "name") }, [.string("flagged"), .string("flagged")],
        "the names an update by query wrote")
      try expectEqual(feed[0].changes[1].value(of: "score"), .double(0.5), "a value an insert wrote")
      try expectEqual(
        feed[1].changes[0].fields, ["id", "name", "rank", "score", "flag"], "the fields a change names")
      try expect(feed.allSatisfy { abs($0.committedAt.timeIntervalSinceNow) < 600 }, "commit times are now")
    },
    ConformanceCheck(
      "changes.failed-batches-never", requires: .changeFeed,
      "A batch that fails — a duplicate id after a good insert, an update of a missing id, "
        + "a delete a deny rule refuses — leaves nothing in the feed."
    ) { context in
      let store = try await context.store()
      try await store.prepare([Versioned.self, Account.self, RefThread.self, RefPin.self])
      try await store.recordChanges()
      try await store.insert(Versioned(id: 1, version: 0))
      try await store.insert(RefThread(id: 1, title: "t"))
      try await store.insert(RefPin(id: 1, threadID: 1))
      let before = try await batches(of: store).count
      try await expectThrows(.duplicateID, "a batch inserting a new id and then a stored one") {
        try await store.insert([Versioned(id: 2, version: 0), Versioned(id: 1, version: 0)])
      }
      try await expectThrows(.notFound, "an update of an id not stored") {
        try await store.update(Versioned(id: 5, version: 1))
      }
      try await expectThrows(.referenceViolation, "deleting a thread a pin refers to") {
        try await store.delete(RefThread.self, id: 1)
      }
      try expectEqual(try await batches(of: store).count, before, "batches after three failed batches")
      try await store.insert(Versioned(id: 3, version: 0))
      let last = try await batches(of: store).last?.changes.map(\.id)
      try expectEqual(last, [.int(3)], "the batch after the failed ones")
    },
    ConformanceCheck(
      "changes.cascades-as-rows", requires: .changeFeed,
      "A delete that delete rules expand appears as every row it really changed: the cascaded rows deleted "
        + "and the nullified rows updated, in the same batch."
    ) { context in
      let store = try await context.store()
      try await store.prepare([RefThread.self, RefMessage.self, RefNote.self])
      try await store.recordChanges()
      try await store.insert(RefThread(id: 1, title: "t"))
      try await store.insert([
        RefMessage(id: 10, threadID: 1, text: "m", read: false),
        RefMessage(id: 11, threadID: 1, text: "n", read: true),
      ])
      try await store.insert(RefNote(id: 20, threadID: 1, text: "x"))
      try await store.delete(RefThread.self, id: 1)
      guard let last = try await batches(of: store).last else { throw CheckFailure("The feed is empty.") }
      let seen = Set(last.changes.map { "\($0.entity) \($0.kind.rawValue) \($0.id)" })
      try expectEqual(
        seen,
        ["RefThread delete 1", "RefMessage delete 10", "RefMessage delete 11", "RefNote update 20"],
        "the rows the cascading delete changed")
      let note = last.changes.first { $0.entity == "RefNote" }
      try expectEqual(note?.value(of: "threadID"), .null, "the nullified note's reference")
    },
    ConformanceCheck(
      "changes.resume-after-reopen", requires: [.changeFeed, .reopenable],
      "A position survives closing and reopening the store: the feed stays on without being turned on "
        + "again, and reading after the position gives exactly the batches committed since."
    ) { context in
      var store = try await context.store(with: [Versioned(id: 1, version: 0)])
      try await store.recordChanges()
      // Where this check's batches begin (a target's URL may have turned the feed on earlier).
      let start = try await store.lastChangePosition()
      try await store.update(Versioned(id: 1, version: 1))
      try await store.update(Versioned(id: 1, version: 2))
      let seen = try await batches(of: store, after: start)
      guard let position = seen.last?.position else { throw CheckFailure("The feed is empty.") }
      let encoded = try JSONEncoder().encode([position])
      store = try await context.reopen(store)
      try await store.prepare([Versioned.self])
      try await store.update(Versioned(id: 1, version: 3))
      let resumed = try JSONDecoder().decode([ChangePosition].self, from: encoded)[0]
      try expectEqual(resumed, position, "the position after a round trip through JSON")
      let after = try await batches(of: store, after: resumed)
      try expectEqual(
        after.map { $0.changes.map { $0.value(of: "version") } }, [[.int(3)]],
        "the batches after the position")
      try expect(after[0].position > position, "the new batch's position follows the old one")
      try expectEqual(
        try await batches(of: store, after: start).count, 3, "batches from the check's start after reopening")
      try expectEqual(ChangePosition(position.description), position, "a position read back from its text")
    },
    ConformanceCheck(
      "changes.trimmed-position", requires: .changeFeed,
      "After trimming, reading after a position whose next batch is gone fails with changesTrimmed, while "
        + "reading after the trim point goes on; a retention by count keeps the last batches."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      try await store.recordChanges()
      let start = try await store.lastChangePosition()
      for version in Int64(1)...5 { try await store.update(Versioned(id: 1, version: version)) }
      let feed = try await batches(of: store, after: start)
      try expectEqual(feed.count, 5, "batches before trimming")
      try await store.trimChanges(before: feed[2].position)
      let error = try await expectThrows(.changesTrimmed, "reading after a trimmed position") {
        try await batches(of: store, after: feed[0].position)
      }
      try expectMentions(error, [feed[0].position.description], "the trimmed-position error")
      try await expectThrows(.changesTrimmed, "reading from the start of a trimmed feed") {
        try await batches(of: store)
      }
      let rest = try await batches(of: store, after: feed[2].position)
      try expectEqual(rest.map(\.position), Array(feed[3...].map(\.position)), "batches after the trim point")
      try expectEqual(try await store.lastChangePosition(), feed[4].position, "the last position")
      try await store.recordChanges(retention: .count(10))
      for version in Int64(6)...200 { try await store.update(Versioned(id: 1, version: version)) }
      guard let last = try await store.lastChangePosition() else { throw CheckFailure("No last position.") }
      try await expectThrows(.changesTrimmed, "reading from a position a retention of 10 trimmed") {
        try await batches(of: store, after: feed[4].position)
      }
      let kept = try await batches(of: store, after: ChangePosition(sequence: last.sequence - 10)).count
      try expectEqual(kept, 10, "the last 10 batches, which a retention of 10 keeps")
    },
    ConformanceCheck(
      "changes.follow-wakes", requires: .changeFeed,
      "A follower waiting at the end of the feed receives batches committed through this handle and through "
        + "another handle, and a plain read ends at the end."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      try await store.recordChanges()
      let start = try await store.lastChangePosition()
      let other: Store
      if context.target.capabilities.contains(.observesOtherHandles) {
        other = try await context.secondHandle(store)
        try await other.prepare([Versioned.self])
      } else {
        other = store
      }
      let seen = LockedState<[Int64]>([])
      let follower = Task {
        for try await batch in store.changes(after: start, follow: true) {
          let versions = batch.changes.compactMap { change -> Int64? in
            if case .int(let version) = change.value(of: "version") { return version }
            return nil
          }
          seen.withLock { $0 += versions }
        }
      }
      defer { follower.cancel() }
      for version in Int64(1)...20 {
        try await (version % 2 == 0 ? other : store).update(Versioned(id: 1, version: version))
      }
      try await waitFor("the 20th batch", { seen.withLock { $0.count } >= 20 })
      try expectEqual(seen.withLock { $0 }, Array(1...20), "what the follower saw, in order")
    },
    ConformanceCheck(
      "changes.observe-follows-feed", requires: [.changeFeed, .observesOtherHandles],
      "With the feed on, a query observed through one handle sees what another handle commits to its entity, "
        + "up to the last of a burst of commits, and still sees what this handle commits."
    ) { context in
      let store = try await context.store(with: [Versioned(id: 1, version: 0)])
      try await store.recordChanges()
      try await store.prepare([Item.self])
      let other = try await context.secondHandle(store)
      try await other.prepare([Versioned.self, Item.self])
      let latest = LockedState<[Versioned]?>(nil)
      let reader = Task {
        for try await values in store.query(Versioned.self).observe() { latest.withLock { $0 = values } }
      }
      defer { reader.cancel() }
      try await waitFor("the first result", { latest.withLock { $0 } == [Versioned(id: 1, version: 0)] })
      try await other.insert(Item(id: 1, name: "elsewhere", rank: nil, score: nil, flag: true))
      for version in Int64(1)...30 { try await other.update(Versioned(id: 1, version: version)) }
      try await waitFor(
        "the last of 30 updates made through the other handle",
        { latest.withLock { $0?.first?.version } == 30 })
      try await store.insert(Versioned(id: 2, version: 0))
      try await waitFor("an insert through this handle", { latest.withLock { $0?.count } == 2 })
    },
    ConformanceCheck(
      "changes.replay-equals-source", requires: [.changeFeed, .preconditions],
      "Replaying the whole feed into an empty store gives a store whose digest equals the source's, after "
        + "random inserts, updates, upserts, deletes, updates and deletes by query, increments, cascades "
        + "and unique values swapped within a batch (seed COFFER_CONFORMANCE_SEED)."
    ) { context in
      let types: [any Storable.Type] = [
        Item.self, RefThread.self, RefMessage.self, RefNote.self, Account.self,
      ]
      let store = try await context.store()
      try await store.prepare(types)
      try await store.recordChanges()
      var random = SplitMix64(seed: differentialSeed())
      try await randomChanges(to: store, steps: 240, random: &random)
      let replica = try await context.store()
      try await replica.prepare(types)
      for try await batch in store.changes() { try await replica.replay(batch) }
      let source = try await store.digest()
      let copy = try await replica.digest()
      try expectEqual(copy.differences(from: source), [], "differences between the replica and the source")
      // Replaying the last batch again, on the state it left, changes nothing.
      guard let last = try await batches(of: store).last else { throw CheckFailure("The feed is empty.") }
      try await replica.replay(last)
      try expectEqual(try await replica.digest(), source, "the replica after replaying its last batch again")
    },
    ConformanceCheck(
      "changes.processes-follower-replay", requires: [.changeFeed, .multiProcess],
      "Four processes writing at once (this one and three children) while this one follows the feed: "
        + "every row arrives once, and replaying what the follower saw gives the final store."
    ) { context in
      let child = try childProgram(of: context, as: "the writers beside this process")
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-shared")
      let store = Store(backend: try await context.target.open(url))
      let follower = LockedState<[CommittedBatch]>([])
      var processes: [ChildProcess] = []
      var reader: Task<Void, any Error>?
      do {
        try await store.prepare([ProcessRecord.self])
        try await store.recordChanges()
        reader = Task {
          for try await batch in store.changes(follow: true) { follower.withLock { $0.append(batch) } }
        }
        for writer in 1...3 {
          processes.append(
            try startChild(
              child, [url.description, String(childFirstID * Int64(writer)), String(processCommits)],
              log: context.directory + "/child-\(writer).log"))
        }
        for step in 0..<processCommits {
          try await store.insert(ProcessRecord(id: Int64(step), writer: "parent", step: Int64(step)))
        }
        for (index, process) in processes.enumerated() {
          try await waitForChild(process, log: context.directory + "/child-\(index + 1).log")
        }
        let total = processCommits * 4
        try await waitFor(
          "all \(total) rows of four processes in the feed",
          { follower.withLock { $0.reduce(0) { $0 + $1.changes.count } } >= total })
        reader?.cancel()
        let seen = follower.withLock { $0 }
        try expect(
          zip(seen, seen.dropFirst()).allSatisfy { $0.position < $1.position },
          "the follower's positions grow")
        let ids = seen.flatMap { $0.changes.map(\.id) }
        try expectEqual(Set(ids).count, ids.count, "rows that arrived more than once")
        let replica = try await context.store()
        try await replica.prepare([ProcessRecord.self])
        for batch in seen { try await replica.replay(batch) }
        try expectEqual(
          try await replica.digest().differences(from: try await store.digest()), [],
          "differences between the follower's replay and the final store")
        try await store.close()
        await context.target.removeScratch(url)
      } catch {
        reader?.cancel()
        for process in processes where process.termination == nil {
          process.kill()
          _ = await process.waitUntilExit()
        }
        try? await store.close()
        await context.target.removeScratch(url)
        throw error
      }
    },
    ConformanceCheck(
      "changes.killed-writer-replay", requires: [.changeFeed, .multiProcess, .durable],
      "A writing process killed (SIGKILL) at random points leaves the feed and the rows in step: after each "
        + "kill, the store reopened and its whole feed replayed into an empty store give an equal digest "
        + "(seed COFFER_CONFORMANCE_SEED)."
    ) { context in
      let child = try childProgram(of: context, as: "the writer to kill")
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-shared")
      var store = Store(backend: try await context.target.open(url))
      try await store.prepare([ProcessRecord.self])
      try await store.recordChanges()
      try await store.close()
      var random = SplitMix64(seed: differentialSeed())
      do {
        for round in 0..<3 {
          let log = context.directory + "/child-\(round).log"
          let process = try startChild(
            child, [url.description, String(childFirstID * Int64(round + 1)), String(100_000)], log: log)
          // Killed a random moment after its first commit of the round, in the middle of writing.
          let watcher = Store(backend: try await context.target.open(url))
          try await watcher.prepare([ProcessRecord.self])
          let before = try await watcher.query(ProcessRecord.self).count()
          let deadline = ContinuousClock.now + .seconds(60)
          while try await watcher.query(ProcessRecord.self).count() == before {
            guard process.termination == nil, ContinuousClock.now < deadline else {
              try await watcher.close()
              throw CheckFailure("The writer made no commit in round \(round + 1) (it ended or took 60 s).")
            }
            try await Task.sleep(for: .milliseconds(2))
          }
          try await watcher.close()
          try await Task.sleep(for: .milliseconds(Int(random.below(300))))
          process.kill()
          _ = await process.waitUntilExit()
          store = Store(backend: try await context.target.open(url))
          try await store.prepare([ProcessRecord.self])
          let replica = try await context.store()
          try await replica.prepare([ProcessRecord.self])
          for try await batch in store.changes() { try await replica.replay(batch) }
          try expectEqual(
            try await replica.digest().differences(from: try await store.digest()), [],
            "differences between the replayed feed and the store after kill \(round + 1)")
          try await store.close()
        }
        await context.target.removeScratch(url)
      } catch {
        try? await store.close()
        await context.target.removeScratch(url)
        throw error
      }
    },
  ]

  /// Every batch of a store's feed after a position, read to its current end.
  static func batches(of store: Store, after position: ChangePosition? = nil) async throws -> [CommittedBatch]
  {
    var batches: [CommittedBatch] = []
    for try await batch in store.changes(after: position) { batches.append(batch) }
    return batches
  }

  /// Random changes of every kind to the models of `changes.replay-equals-source`; those a
  /// reference refuses are expected to fail and change nothing.
  static func randomChanges(to store: Store, steps: Int, random: inout SplitMix64) async throws {
    for step in 0..<steps {
      let id = Int64(1 + random.below(30))
      let thread = Int64(1 + random.below(8))
      do {
        switch random.below(13) {
        case 0: try await store.insert(RefThread(id: thread, title: "thread \(step)"))
        case 1, 2: try await store.insert(RefMessage(id: id, threadID: thread, text: "m\(step)", read: false))
        case 3: try await store.insert(RefNote(id: id, threadID: random.chance(30) ? nil : thread, text: "n"))
        case 4: try await store.delete(RefThread.self, id: thread)
        case 5:
          _ = try await store.query(RefMessage.self).filter(\.threadID == thread).update(\.read, to: true)
        case 6:
          try await store.upsert(
            Item(
              id: id, name: "i\(step)", rank: random.chance(30) ? nil : Int64(step), score: Double(step) / 3,
              flag: random.chance(50)))
        case 7: _ = try await store.query(Item.self).filter(\.id <= id).increment(\.rank, by: 2)
        case 8: _ = try await store.query(Item.self).filter(\.flag == true && \.id > id).delete()
        case 9: try await store.delete(Item.self, id: id)
        case 10:
          try await store.batch { batch in
            try batch.upsert(Item(id: id, name: "b", rank: 1, score: nil, flag: false))
            try batch.upsert(Item(id: id + 40, name: "b2", rank: 2, score: -0.0, flag: true))
            try batch.delete(Item.self, id: id + 1)
          }
        case 11:
          // Two accounts swap their unique emails in one batch, through a third value.
          let (first, second) = (Int64(1 + random.below(4)), Int64(5 + random.below(4)))
          try await store.upsert(Account(id: first, email: "a\(first)@x", name: "a"))
          try await store.upsert(Account(id: second, email: "a\(second)@x", name: "b"))
          try await store.batch { batch in
            try batch.update(Account(id: first, email: nil, name: "a"))
            try batch.update(Account(id: second, email: "a\(first)@x", name: "b"))
            try batch.update(Account(id: first, email: "a\(second)@x", name: "a"))
          }
        default: _ = try await store.query(RefThread.self).filter(\.id >= thread).delete()
        }
      } catch let error as CofferError
        where error.code == .duplicateID || error.code == .referenceViolation || error.code == .notFound
        || error.code == .uniqueViolation
      {
        continue
      }
    }
  }
}
