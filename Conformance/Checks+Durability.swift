@_spi(Backend) import Coffer
import Foundation

extension ConformanceSuite {
  static let durabilityChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "durability.reopen-keeps-data", requires: .reopenable,
      "Everything applied before close — inserts, updates, deletes — is there after reopening."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await store.update(Item(id: 1, name: "updated", rank: nil, score: nil, flag: false))
      try await store.delete(Item.self, id: 2)
      try await store.insert(Tag(id: "t", count: 3))
      let reopened = try await context.reopen(store)
      var expected = Item.sample.filter { $0.id != 2 }
      expected[0] = Item(id: 1, name: "updated", rank: nil, score: nil, flag: false)
      try expectEqual(try await reopened.all(Item.self), expected, "items after reopening")
      try expectEqual(try await reopened.get(Tag.self, id: "t")?.count, 3, "Tag t after reopening")
    },
    ConformanceCheck(
      "durability.failed-batch-leaves-nothing", requires: .reopenable,
      "A batch that failed has left nothing behind after reopening."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try await expectThrows(.duplicateID, "batch ending in a duplicate insert") {
        try await store.batch { batch in
          try batch.insert(Item(id: 60, name: "x", rank: nil, score: nil, flag: true))
          try batch.delete(Item.self, id: 1)
          try batch.insert(Item(id: 2, name: "dup", rank: nil, score: nil, flag: true))
        }
      }
      let reopened = try await context.reopen(store)
      try expectEqual(try await reopened.all(Item.self), Item.sample, "items after reopening")
    },
    ConformanceCheck(
      "durability.reopen-keeps-every-kind", requires: .reopenable,
      "Values of every kind read the same after reopening."
    ) { context in
      let samples = [
        Sample(id: 1),
        Sample(
          id: 2, flag: true, int: .min, double: -.infinity, text: "e\u{301}\u{0}🙂", bytes: Data([0, 0xFF]),
          date: Date(timeIntervalSince1970: -1.5), uuid: uuid(0xAB, last: 1), optionalText: "o",
          document: Document(
            title: "t", numbers: [1, 2], attributes: ["k": "v"], parts: [.init(x: 1, tags: [])], note: nil),
          color: .blue, level: .extreme),
      ]
      let reopened = try await context.reopen(try await context.store(with: samples))
      try expectEqual(try await reopened.all(Sample.self), samples, "samples after reopening")
    },
    ConformanceCheck(
      "durability.unique-index-survives-reopen", requires: .reopenable,
      "Unique indexes are still enforced after reopening."
    ) { context in
      let reopened = try await context.reopen(
        try await context.store(with: [Account(id: 1, email: "a@x", name: "A")]))
      try await expectThrows(.uniqueViolation, "insert of a taken email after reopening") {
        try await reopened.insert(Account(id: 2, email: "a@x", name: "B"))
      }
      try await expectThrows(.duplicateID, "insert of a stored id after reopening") {
        try await reopened.insert(Account(id: 1, email: "z@x", name: "Z"))
      }
    },
    ConformanceCheck(
      "durability.reopen-after-freed-large-value", requires: [.reopenable, .schemaEvolution],
      "A store whose last batch inserted a large value and deleted it again reopens with nothing in it."
    ) { context in
      let evolved = try await context.reopen(try await context.store(with: [BlobV1]()))
      try await evolved.prepare([BlobAddsNote.self])
      try await evolved.batch { batch in
        try batch.insert(BlobAddsNote(id: 1, blob: Data(repeating: 0xA5, count: 70_000), note: nil))
        try batch.delete(BlobAddsNote.self, id: 1)
      }
      let reopened = try await context.reopen(evolved)
      try expectEqual(try await reopened.query(BlobAddsNote.self).count(), 0, "rows after reopening")
      let kept = BlobAddsNote(id: 2, blob: Data(repeating: 0x5A, count: 70_000), note: "n")
      try await reopened.insert(kept)
      let again = try await context.reopen(reopened)
      try expectEqual(
        try await again.all(BlobAddsNote.self), [kept], "rows after inserting and reopening again")
    },
  ]
}
