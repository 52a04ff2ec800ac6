@_spi(Backend) import Coffer
import Foundation

extension ConformanceSuite {
  static let identityChecks: [ConformanceCheck] = [
    ConformanceCheck("ids.int64", "Int64 ids from Int64.min to Int64.max work and order numerically.") {
      context in
      let ids: [Int64] = [.min, -1, 0, 1, 1 << 40, .max]
      let store = try await context.store(
        with: ids.reversed().map { Item(id: $0, name: "\($0)", rank: nil, score: nil, flag: true) })
      try await expectIDs(store.query(Item.self), ids, "all ids")
      for id in ids {
        try expectEqual(try await store.get(Item.self, id: id)?.name, "\(id)", "name of id \(id)")
      }
      try await store.delete(Item.self, id: .min)
      try expectEqual(try await store.get(Item.self, id: .min), nil, "get(Int64.min) after delete")
    },
    ConformanceCheck(
      "ids.string-arbitrary",
      "String ids may be any Unicode text: spaces, quotes, SQL, emoji, NUL, both é forms."
    ) { context in
      let ids = [
        "", " ", "a b", "'", "\"", "x'); DROP TABLE Tag; --", "%_*", "\u{E9}", "e\u{301}", "🙂", "a\u{0}b",
        "\\",
      ]
      let store = try await context.store(
        with: ids.enumerated().map { Tag(id: $0.element, count: Int64($0.offset)) })
      for (position, id) in ids.enumerated() {
        try expectEqual(
          try await store.get(Tag.self, id: id)?.count, Int64(position), "count of Tag \(id.debugDescription)"
        )
      }
      try expectEqual(try await store.query(Tag.self).count(), ids.count, "count()")
      try await store.update(Tag(id: "e\u{301}", count: 100))
      try expectEqual(
        try await store.get(Tag.self, id: "\u{E9}")?.count, 7, "precomposed é after updating decomposed")
    },
    ConformanceCheck("ids.uuid", "UUID ids work for get, update, delete and order by bytes.") { context in
      let ids = [uuid(0, last: 1), uuid(0x80, last: 0), uuid(0x7F, last: 0xFF), uuid(0xFF, last: 0)]
      let store = try await context.store(with: ids.map { Token(id: $0, count: 1) })
      try await store.update(Token(id: ids[1], count: 2))
      try await store.delete(Token.self, id: ids[3])
      try expectEqual(try await store.get(Token.self, id: ids[1])?.count, 2, "count after update")
      try await expectIDs(store.query(Token.self), [ids[0], ids[2], ids[1]], "ids in order")
    },
    ConformanceCheck(
      "names.unicode-and-sql",
      "Entity and field names may hold Unicode, quotes, spaces, punctuation and SQL keywords."
    ) { context in
      let values = [
        OddNames(id: "a", value: 3, note: nil), OddNames(id: "b'", value: 1, note: "x\"y"),
        OddNames(id: "c\"", value: 2, note: "z"),
      ]
      let store = try await context.store(with: values)
      try expectEqual(try await store.get(OddNames.self, id: "b'"), values[1], "get(b')")
      let value = FieldRef(OddNames.CodingKeys.value)
      let note = FieldRef(OddNames.CodingKeys.note)
      try await expectIDs(
        store.query(OddNames.self).sort(\.value, .descending), ["a", "c\"", "b'"], "sorted by value desc")
      try await expectIDs(
        store.query(OddNames.self).filter(note != nil && value > 1), ["c\""], "note != nil and value > 1")
      try await store.update(OddNames(id: "a", value: 0, note: "n"))
      try expectEqual(
        try await store.query(OddNames.self).filter(note.hasPrefix("x")).delete(), 1,
        "delete(note hasPrefix x)"
      )
      try await expectIDs(store.query(OddNames.self), ["a", "c\""], "ids left")
    },
    ConformanceCheck(
      "names.entities-differ-by-case", "Entity names that differ only in case are different entities."
    ) {
      context in
      let store = try await context.store(with: [LowerOrder(id: 1, total: 10)])
      try await store.insert(UpperOrder(id: 1, label: "upper"))
      try expectEqual(try await store.get(LowerOrder.self, id: 1), LowerOrder(id: 1, total: 10), "order 1")
      try expectEqual(
        try await store.get(UpperOrder.self, id: 1), UpperOrder(id: 1, label: "upper"), "Order 1")
    },
    ConformanceCheck(
      "names.fields-differ-by-case", "Field names that differ only in case are different fields."
    ) {
      context in
      let store = try await context.store(with: [CaseFields(id: 1, name: "lower", Name: "upper")])
      try expectEqual(try await store.get(CaseFields.self, id: 1)?.Name, "upper", "Name")
      try expectEqual(
        try await store.query(CaseFields.self).filter(FieldRef("name") == "lower").count(), 1,
        "count(name == lower)")
    },
  ]
}
