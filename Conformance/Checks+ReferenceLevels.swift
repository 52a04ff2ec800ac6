@_spi(Backend) import Coffer

/// How many rows the checks below hang under one parent: more than the core reads at once for a
/// delete rule (500), so that the rules cross the bounds of what it reads together.
private let manyChildren: Int64 = 1_100

extension ConformanceSuite {
  static let referenceLevelChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.cascade-wide", requires: .preconditions,
      "Deleting a row with more than a thousand referring rows applies every rule to all of them and to what "
        + "refers to them: cascades through a join entity, nullify, and no other rows."
    ) { context in
      let store = try await context.store(with: refThreads(2))
      try await store.prepare([
        RefMessage.self, RefLabel.self, RefLabeling.self, RefNote.self, RefAttachment.self,
      ])
      try await store.insert([RefLabel(id: "a", name: "A"), RefLabel(id: "b", name: "B")])
      let messages = (1...manyChildren).map { RefMessage(id: $0, threadID: 1, text: "", read: false) }
      try await store.insert(messages + [RefMessage(id: 5_000, threadID: 2, text: "", read: false)])
      // Every other message of thread 1 carries a label, and so does the one of thread 2.
      let labeled = messages.map(\.id).filter { $0.isMultiple(of: 2) } + [5_000]
      try await store.insert(labeled.map { RefLabeling(id: "\($0)/a", messageID: $0, labelID: "a") })
      try await store.insert(
        [RefAttachment(id: 1, messageID: manyChildren), RefAttachment(id: 2, messageID: 5_000)])
      try await store.insert(
        (1...manyChildren).map { RefNote(id: $0, threadID: $0 == manyChildren ? 2 : 1, text: "n\($0)") })

      let summary = try await store.batch { batch in try batch.delete(RefThread.self, id: 1) }
      try expectEqual(summary.deleted, 1, "rows the batch's own operations deleted (rules are not counted)")
      try expectEqual(summary.updated, 0, "rows the batch's own operations updated (rules are not counted)")
      try await expectIDs(store.query(RefMessage.self), [5_000], "messages left")
      try await expectIDs(store.query(RefLabeling.self), ["5000/a"], "labelings left")
      try await expectIDs(store.query(RefAttachment.self), [2], "attachments left")
      try await expectIDs(store.query(RefLabel.self), ["a", "b"], "labels left")
      try expectEqual(
        try await store.query(RefNote.self).filter(\.threadID == nil).count(), Int(manyChildren) - 1,
        "notes whose thread was deleted")
      try expectEqual(
        try await store.get(RefNote.self, id: manyChildren)?.threadID, .some(2), "the note of thread 2")
      try expectEqual(try await store.get(RefNote.self, id: 7)?.text, "n7", "a nullified note's other fields")
    },
    ConformanceCheck(
      "references.cascade-deep", requires: .preconditions,
      "A cascade through a wide tree deletes every row under the deleted one, level after level, and ends."
    ) { context in
      let store = try await context.store()
      try await store.prepare([RefNode.self])
      // Root 1; children 2…1,101 under it; under each child one grandchild; a chain of 40 under
      // the last grandchild; node 9,000 in a tree of its own.
      var nodes = [
        RefNode(id: 1, parentID: nil, name: "root"), RefNode(id: 9_000, parentID: nil, name: "other"),
      ]
      for child in 2...(manyChildren + 1) {
        nodes.append(RefNode(id: child, parentID: 1, name: "child"))
        nodes.append(RefNode(id: child + 2_000, parentID: child, name: "grandchild"))
      }
      var parent = manyChildren + 1 + 2_000
      for link in 1...Int64(40) {
        nodes.append(RefNode(id: 10_000 + link, parentID: parent, name: "chain"))
        parent = 10_000 + link
      }
      try await store.insert(nodes)
      try await store.delete(RefNode.self, id: 1)
      try await expectIDs(store.query(RefNode.self), [9_000], "nodes left after deleting the root")
    },
    ConformanceCheck(
      "references.deny-wide", requires: .preconditions,
      "A delete by filter of more than a thousand rows fails with referenceViolation naming the row a deny "
        + "reference points to, wherever it is among them, and applies nothing."
    ) { context in
      let store = try await context.store(with: refThreads(Int(manyChildren)))
      try await store.prepare([RefMessage.self, RefPin.self])
      try await store.insert(RefMessage(id: 1, threadID: 3, text: "", read: false))
      try await store.insert(RefPin(id: 1, threadID: manyChildren - 50))
      let error = try await expectThrows(.referenceViolation, "deleting every thread, one of them pinned") {
        try await store.query(RefThread.self).delete()
      }
      try expectEqual(error.entity, "RefThread", "the entity of the row that cannot be deleted")
      try expectEqual(error.idValue, .int(manyChildren - 50), "the id of the row that cannot be deleted")
      try expectEqual(try await store.query(RefThread.self).count(), Int(manyChildren), "threads left")
      try await expectIDs(store.query(RefMessage.self), [1], "messages left")
    },
  ]
}
