@_spi(Backend) import Coffer
import CofferTools
import Foundation

/// Threads 1...count titled `t1`, `t2`, ….
func refThreads(_ count: Int) -> [RefThread] {
  (1...Int64(count)).map { RefThread(id: $0, title: "t\($0)") }
}

/// A store holding threads 1...3, with messages 11, 12 of thread 1 and 21 of thread 2.
func storeWithThreads(_ context: CheckContext, also types: [any Storable.Type] = []) async throws -> Store {
  let store = try await context.store(with: refThreads(3))
  try await store.prepare([RefMessage.self] + types)
  try await store.insert([
    RefMessage(id: 11, threadID: 1, text: "a", read: false),
    RefMessage(id: 12, threadID: 1, text: "b", read: true),
    RefMessage(id: 21, threadID: 2, text: "c", read: false),
  ])
  return store
}

extension ConformanceSuite {
  static let referenceChecks: [ConformanceCheck] =
    referenceWriteChecks + referenceDeleteChecks + referenceLevelChecks + referenceToolChecks
    + referenceRelationChecks + referenceRandomChecks + referenceConcurrencyChecks

  static let referenceWriteChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.schema-stored",
      "A schema's references (field, entity, delete rule) are stored with it and listed by storedSchemas()."
    ) { context in
      let store = try await context.store()
      try await store.prepare([RefThread.self, RefMessage.self, RefNote.self, RefLoose.self])
      let stored = Dictionary(uniqueKeysWithValues: try await store.storedSchemas().map { ($0.name, $0) })
      try expectEqual(
        stored["RefMessage"]?.references,
        [EntityReference(field: "threadID", entity: "RefThread", onDelete: .cascade)],
        "RefMessage's references")
      try expectEqual(stored["RefNote"]?.references.map(\.onDelete), [.nullify], "RefNote's rule")
      try expectEqual(stored["RefLoose"]?.references.map(\.onDelete), [DeleteRule.none], "RefLoose's rule")
      try expectEqual(stored["RefThread"]?.references, [], "RefThread refers to nothing")
    },
    ConformanceCheck(
      "references.insert-missing-target", requires: .preconditions,
      "Inserting a row that refers to an id its referenced entity does not store fails with referenceViolation "
        + "naming entity, id and field, and stores nothing."
    ) { context in
      let store = try await storeWithThreads(context)
      let error = try await expectThrows(.referenceViolation, "a message of thread 99") {
        try await store.insert(RefMessage(id: 5, threadID: 99, text: "secret-text", read: false))
      }
      try expectEqual(error.entity, "RefMessage", "the error's entity")
      try expectEqual(error.idValue, .int(5), "the error's id")
      try expectEqual(error.field, "threadID", "the error's field")
      try expect(!error.description.contains("secret-text"), "the error shows no stored value: \(error)")
      try expectEqual(try await store.get(RefMessage.self, id: 5), nil, "the message after the failed insert")
    },
    ConformanceCheck(
      "references.insert-many-missing-target", requires: .preconditions,
      "Inserting many rows where one refers to a missing id stores none of them; when all refer to stored ids, "
        + "all are stored."
    ) { context in
      let store = try await storeWithThreads(context)
      let batch = (0..<50).map {
        RefMessage(id: 100 + Int64($0), threadID: $0 == 37 ? 404 : 3, text: "", read: false)
      }
      let error = try await expectThrows(.referenceViolation, "fifty messages, one of thread 404") {
        try await store.insert(batch)
      }
      try expectEqual(error.idValue, .int(137), "the message named")
      try expectEqual(
        try await store.query(RefMessage.self).filter(\.threadID == 3).count(), 0, "messages stored")
      try await store.insert(batch.filter { $0.threadID == 3 })
      try expectEqual(
        try await store.query(RefMessage.self).filter(\.threadID == 3).count(), 49, "valid messages")
    },
    ConformanceCheck(
      "references.target-in-same-batch", requires: .preconditions,
      "References are checked as of the end of a batch: a row may refer to a row the same batch inserts, "
        + "before or after it."
    ) { context in
      let store = try await storeWithThreads(context)
      try await store.batch { batch in
        try batch.insert(RefThread(id: 7, title: "new"))
        try batch.insert(RefMessage(id: 71, threadID: 7, text: "", read: false))
      }
      try await store.batch { batch in
        try batch.insert(RefMessage(id: 81, threadID: 8, text: "", read: false))
        try batch.insert(RefThread(id: 8, title: "later"))
      }
      try await expectIDs(
        store.query(RefMessage.self).filter(\.threadID >= 7), [71, 81], "messages of new threads")
    },
    ConformanceCheck(
      "references.insert-after-delete-in-batch", requires: .preconditions,
      "A batch that deletes a row and then inserts a row referring to it fails with referenceViolation and "
        + "applies nothing."
    ) { context in
      let store = try await storeWithThreads(context)
      try await expectThrows(.referenceViolation, "delete thread 3, then add a message of it") {
        try await store.batch { batch in
          try batch.delete(RefThread.self, id: 3)
          try batch.insert(RefMessage(id: 31, threadID: 3, text: "", read: false))
        }
      }
      try expect(try await store.get(RefThread.self, id: 3) != nil, "thread 3 is still stored")
    },
    ConformanceCheck(
      "references.update-missing-target", requires: .preconditions,
      "Updating a reference to a missing id, by value or by query, fails with referenceViolation and changes nothing."
    ) { context in
      let store = try await storeWithThreads(context)
      try await expectThrows(.referenceViolation, "update message 11 to thread 99") {
        try await store.update(RefMessage(id: 11, threadID: 99, text: "a", read: false))
      }
      try await expectThrows(.referenceViolation, "update by query to thread 99") {
        try await store.query(RefMessage.self).filter(\.threadID == 1).update(\.threadID, to: 99)
      }
      try expectEqual(
        try await store.query(RefMessage.self).filter(\.threadID == 1).count(), 2, "messages of 1")
      try expectEqual(
        try await store.query(RefMessage.self).filter(\.threadID == 1).update(\.threadID, to: 3), 2,
        "messages moved to a stored thread")
    },
    ConformanceCheck(
      "references.null-and-none", requires: .preconditions,
      "A null reference refers to nothing; a reference with rule none is never checked and survives its target."
    ) { context in
      let store = try await context.store(with: refThreads(2))
      try await store.prepare([RefNote.self, RefLoose.self])
      try await store.insert(RefNote(id: 1, threadID: nil, text: "loose"))
      try await store.insert(RefLoose(id: 1, threadID: 99))
      try await store.insert(RefLoose(id: 2, threadID: 1))
      try await store.delete(RefThread.self, id: 1)
      try await expectIDs(store.query(RefLoose.self), [1, 2], "links with rule none")
      try expectEqual(try await store.get(RefNote.self, id: 1)?.threadID, .some(nil), "the null reference")
    },
    ConformanceCheck(
      "references.in-transaction", requires: .preconditions,
      "A transaction's writes are checked like a batch's: a missing target fails with referenceViolation."
    ) { context in
      let store = try await storeWithThreads(context)
      try await expectThrows(.referenceViolation, "a transaction adding a message of thread 99") {
        try await store.transaction { transaction in
          _ = try await transaction.get(RefThread.self, id: 1)
          try transaction.insert(RefMessage(id: 9, threadID: 99, text: "", read: false))
        }
      }
      try await store.transaction { transaction in
        try transaction.insert(RefMessage(id: 9, threadID: 3, text: "", read: false))
      }
      try expectEqual(
        try await store.get(RefMessage.self, id: 9)?.threadID, 3, "the message the transaction added")
    },
    ConformanceCheck(
      "references.invalid-declarations",
      "A reference on an unknown field, on the id, or nullifying a required field is an invalidSchema error."
    ) { _ in
      let fields = [Field("id", .int), Field("parent", .int), Field("score", .double, isOptional: true)]
      for (reference, what) in [
        (EntityReference(field: "nope", entity: "P"), "an unknown field"),
        (EntityReference(field: "id", entity: "P"), "the id field"),
        (EntityReference(field: "score", entity: "P", onDelete: .cascade), "a double field"),
        (EntityReference(field: "parent", entity: "P", onDelete: .nullify), "nullifying a required field"),
      ] {
        _ = try await expectThrows(.invalidSchema, what) {
          try EntitySchema(name: "C", fields: fields, idField: "id", references: [reference])
        }
      }
    },
  ]

  static let referenceToolChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.tools-keep-references", requires: .preconditions,
      "Export and import, and a copy, carry references in the schemas (even with referring entities first), and "
        + "the new store applies their rules."
    ) { context in
      let source = try await storeWithThreads(context, also: [RefPin.self])
      try await source.insert(RefPin(id: 1, threadID: 3))
      var text = ""
      try await source.exportJSONLines { text += $0 }
      let imported = try await context.store()
      try await imported.importJSONLines(
        AsyncLines(text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)))
      let copied = try await context.store()
      _ = try await StoreCopier(from: source, to: copied).run()
      let schemas = try await source.storedSchemas()
      for (target, what) in [(imported, "the imported store"), (copied, "the copy")] {
        try expectEqual(try await target.storedSchemas(), schemas, "schemas of \(what)")
        try await target.prepare([RefThread.self, RefMessage.self, RefPin.self])
        try await expectThrows(.referenceViolation, "deleting pinned thread 3 in \(what)") {
          try await target.delete(RefThread.self, id: 3)
        }
        try await target.delete(RefThread.self, id: 1)
        try await expectIDs(
          target.query(RefMessage.self), [21], "messages of \(what) after deleting thread 1")
      }
    }
  ]

  static let referenceDeleteChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "references.cascade", requires: .preconditions,
      "Deleting a row deletes the rows that refer to it with rule cascade, in the same batch, and no others."
    ) { context in
      let store = try await storeWithThreads(context)
      try await store.delete(RefThread.self, id: 1)
      try await expectIDs(store.query(RefMessage.self), [21], "messages left")
      try await expectIDs(store.query(RefThread.self), [2, 3], "threads left")
    },
    ConformanceCheck(
      "references.cascade-chain", requires: .preconditions,
      "A cascade follows references on: deleting a thread deletes its messages and their attachments."
    ) { context in
      let store = try await storeWithThreads(context, also: [RefAttachment.self])
      try await store.insert([
        RefAttachment(id: 1, messageID: 11), RefAttachment(id: 2, messageID: 12),
        RefAttachment(id: 3, messageID: 21),
      ])
      let summary = try await store.batch { batch in try batch.delete(RefThread.self, id: 1) }
      try expectEqual(
        summary.deleted, 1, "rows the batch's own operations deleted (cascades are not counted)")
      try await expectIDs(store.query(RefAttachment.self), [3], "attachments left")
      try await expectIDs(store.query(RefMessage.self), [21], "messages left")
    },
    ConformanceCheck(
      "references.cascade-delete-matching", requires: .preconditions,
      "Deleting by filter applies the rules to every row the filter selects, and to no other."
    ) { context in
      let store = try await storeWithThreads(context, also: [RefAttachment.self])
      try await store.insert([RefAttachment(id: 1, messageID: 11), RefAttachment(id: 3, messageID: 21)])
      let deleted = try await store.query(RefThread.self).filter(\.title == "t1" || \.title == "t3").delete()
      try expectEqual(deleted, 2, "threads the query deleted")
      try await expectIDs(store.query(RefMessage.self), [21], "messages left")
      try await expectIDs(store.query(RefAttachment.self), [3], "attachments left")
      try await store.batch { batch in try batch.deleteAll(RefMessage.self, where: \.id == 21) }
      try await expectIDs(
        store.query(RefAttachment.self), [], "attachments after deleting message 21 by filter")
    },
    ConformanceCheck(
      "references.cascade-cycle", requires: .preconditions,
      "A cascade through a cycle of references deletes each row once and ends; a subtree goes with its root."
    ) { context in
      let store = try await context.store()
      try await store.prepare([RefNode.self])
      try await store.batch { batch in
        // 1 → 2 → 3 → 1 is a cycle; 4 hangs under 1; 5 → 6 is a separate tree.
        for (id, parent) in [(1, 3), (2, 1), (3, 2), (4, 1), (5, nil), (6, 5)] as [(Int64, Int64?)] {
          try batch.insert(RefNode(id: id, parentID: parent, name: "n\(id)"))
        }
      }
      try await store.delete(RefNode.self, id: 2)
      try await expectIDs(store.query(RefNode.self), [5, 6], "nodes left after deleting one of the cycle")
      try await store.delete(RefNode.self, id: 6)
      try await expectIDs(store.query(RefNode.self), [5], "nodes left after deleting a leaf")
    },
    ConformanceCheck(
      "references.nullify", requires: .preconditions,
      "Deleting a row sets to null the references to it with rule nullify; other rows keep theirs."
    ) { context in
      let store = try await context.store(with: refThreads(2))
      try await store.prepare([RefNote.self])
      try await store.insert([
        RefNote(id: 1, threadID: 1, text: "x"), RefNote(id: 2, threadID: 2, text: "y"),
        RefNote(id: 3, threadID: 1, text: "z"),
      ])
      try await store.delete(RefThread.self, id: 1)
      try expectEqual(
        try await store.all(RefNote.self).map(\.threadID), [nil, 2, nil],
        "the notes' threads after the delete")
      try expectEqual(
        try await store.all(RefNote.self).map(\.text), ["x", "y", "z"], "the notes' other fields")
    },
    ConformanceCheck(
      "references.deny", requires: .preconditions,
      "Deleting a row that a deny reference points to fails with referenceViolation naming both sides and applies "
        + "nothing; deleting the referring rows first, in the same batch, is allowed."
    ) { context in
      let store = try await storeWithThreads(context, also: [RefPin.self])
      try await store.insert(RefPin(id: 5, threadID: 1))
      let error = try await expectThrows(.referenceViolation, "deleting pinned thread 1") {
        try await store.batch { batch in
          try batch.delete(RefThread.self, id: 2)
          try batch.delete(RefThread.self, id: 1)
        }
      }
      try expectMentions(error, ["RefThread", "RefPin", "threadID"], "the deny error")
      try expectEqual(error.idValue, .int(1), "the id of the row that cannot be deleted")
      try await expectIDs(store.query(RefThread.self), [1, 2, 3], "threads after the refused batch")
      try await expectIDs(store.query(RefMessage.self), [11, 12, 21], "messages after the refused batch")
      try await store.batch { batch in
        try batch.delete(RefPin.self, id: 5)
        try batch.delete(RefThread.self, id: 1)
      }
      try await expectIDs(store.query(RefThread.self), [2, 3], "threads after unpinning and deleting")
    },
    ConformanceCheck(
      "references.deny-delete-matching", requires: .preconditions,
      "A delete by filter that selects one row a deny reference points to deletes nothing."
    ) { context in
      let store = try await storeWithThreads(context, also: [RefPin.self])
      try await store.insert(RefPin(id: 5, threadID: 3))
      try await expectThrows(.referenceViolation, "deleting every thread") {
        try await store.query(RefThread.self).delete()
      }
      try await expectIDs(store.query(RefThread.self), [1, 2, 3], "threads after the refused delete")
      try await store.batch { batch in
        try batch.deleteAll(RefPin.self, where: \.threadID == 3)
        try batch.deleteAll(RefThread.self)
      }
      try expectEqual(try await store.query(RefThread.self).count(), 0, "threads after unpinning first")
    },
    ConformanceCheck(
      "references.rules-together", requires: .preconditions,
      "One delete applies every rule at once: cascade, nullify and deny references to the same row."
    ) { context in
      let store = try await storeWithThreads(context, also: [RefNote.self, RefPin.self])
      try await store.insert(RefNote(id: 1, threadID: 2, text: ""))
      try await store.insert(RefPin(id: 1, threadID: 3))
      try await store.delete(RefThread.self, id: 2)
      try await expectIDs(store.query(RefMessage.self), [11, 12], "messages after deleting thread 2")
      try expectEqual(try await store.get(RefNote.self, id: 1)?.threadID, .some(nil), "the note of thread 2")
      try await expectThrows(.referenceViolation, "deleting pinned thread 3") {
        try await store.delete(RefThread.self, id: 3)
      }
    },
    ConformanceCheck(
      "references.survive-reopen", requires: [.reopenable, .preconditions],
      "References are kept by the store: after reopening, a delete through the row API, by a store that never "
        + "prepared the referring type, still applies the rules."
    ) { context in
      let first = try await storeWithThreads(context, also: [RefPin.self])
      try await first.insert(RefPin(id: 1, threadID: 3))
      let store = try await context.reopen(first)
      let schemas = try await store.storedSchemas()
      try await store.prepare(schemas: schemas.filter { $0.name == "RefThread" })
      try await store.apply(ChangeSet([.delete(entity: "RefThread", id: .int(1))]))
      try await store.prepare([RefMessage.self])
      try await expectIDs(store.query(RefMessage.self), [21], "messages after deleting thread 1")
      try await expectThrows(.referenceViolation, "deleting pinned thread 3 after reopening") {
        try await store.apply(ChangeSet([.delete(entity: "RefThread", id: .int(3))]))
      }
    },
  ]
}
