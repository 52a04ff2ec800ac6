@_spi(Backend) import Coffer
import Foundation

/// `Note`: an int id, a title with an index, a code with a unique one, an unindexed body.
private func noteSchema() throws -> EntitySchema {
  try EntitySchema(
    name: "Note",
    fields: [Field("id", .int), Field("title", .string), Field("code", .string), Field("body", .string)],
    idField: "id", indexes: [.on("title"), .unique("code")])
}

/// `Slug`: a String id and a number.
private func slugSchema() throws -> EntitySchema {
  try EntitySchema(name: "Slug", fields: [Field("id", .string), Field("count", .int)], idField: "id")
}

private func note(_ id: Int64, _ title: String, _ code: String, _ body: String = "") -> Row {
  Row([.int(id), .string(title), .string(code), .string(body)])
}

/// One mebibyte of text, and the longest String (508 UTF-8 bytes) an index of one field or an
/// id holds.
private let megabyte = String(repeating: "x", count: 1 << 20)
private let longest = String(repeating: "k", count: KeySize.maximumBytes - 3)

extension ConformanceSuite {
  static let keySizeChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "keys.long-indexed-value-refused",
      "A batch with a String too long to index (1 MiB) in an indexed or a unique field, or set there by an "
        + "update by query, fails with invalidValue naming entity, id and field, never the value, and "
        + "applies nothing; an unindexed field holds it."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: [try noteSchema()])
      try await store.apply(ChangeSet([.insert(entity: "Note", row: note(1, "first", "a"))]))
      for (field, row) in [("title", note(3, megabyte, "c")), ("code", note(3, "third", megabyte))] {
        for operation in [
          ChangeSet.Operation.insert(entity: "Note", row: row), .upsert(entity: "Note", row: row),
        ] {
          let error = try await expectThrows(.invalidValue, "a 1 MiB \(field)") {
            try await store.apply(
              ChangeSet([.insert(entity: "Note", row: note(2, "second", "b")), operation]))
          }
          try expectEqual(error.entity, "Note", "the entity the error names")
          try expectEqual(error.id, "3", "the id the error names")
          try expectEqual(error.field, field, "the field the error names")
          try expect(error.store != nil, "the error names the store: \(error)")
          try expect(!error.description.contains("xxxxxxxx"), "the error names no value: \(show(error))")
        }
        let update = try await expectThrows(.invalidValue, "an update of \(field) to 1 MiB") {
          try await store.apply(
            ChangeSet([
              .update(
                entity: "Note", row: field == "title" ? note(1, megabyte, "a") : note(1, "first", megabyte))
            ]))
        }
        try expectEqual(update.field, field, "the field an update's error names")
        let byQuery = try await expectThrows(.invalidValue, "an update by query setting \(field) to 1 MiB") {
          try await store.apply(
            ChangeSet([
              .updateMatching(entity: "Note", filter: .all, changes: [.set(field, to: .string(megabyte))])
            ]))
        }
        try expectEqual(byQuery.field, field, "the field an update by query's error names")
      }
      try expectEqual(
        try await store.fetchRows(Query(entity: "Note")), [note(1, "first", "a")],
        "rows after the refused batches")
      try await store.apply(ChangeSet([.insert(entity: "Note", row: note(4, "fourth", "d", megabyte))]))
      try expectEqual(
        try await store.fetchRows(
          Query(entity: "Note", filter: .compare(field: "id", op: .equal, value: .int(4)))),
        [note(4, "fourth", "d", megabyte)], "a 1 MiB unindexed body read back")
    },
    ConformanceCheck(
      "keys.longest-indexed-value-works",
      "Indexed Strings of 508 UTF-8 bytes (the longest an index of one field holds) sharing a long prefix "
        + "are stored, found by equality and sorted and ranged by code point; one byte more is refused; "
        + "an equality or in filter with a 1 MiB value finds nothing."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: [try noteSchema()])
      let prefix = String(longest.dropLast())
      // Titles and codes differ only in their last character; "é" makes 508 bytes in 254 characters.
      let wide = String(repeating: "é", count: (KeySize.maximumBytes - 3) / 2)
      let rows = [
        note(1, prefix + "c", prefix + "c"), note(2, prefix + "a", prefix + "a"), note(3, prefix, prefix),
        note(4, prefix + "b", prefix + "b"), note(5, wide, wide),
      ]
      try await store.apply(ChangeSet(rows.map { .insert(entity: "Note", row: $0) }))
      for field in ["title", "code"] {
        try expectEqual(
          try await store.fetchRows(
            Query(entity: "Note", filter: .compare(field: field, op: .equal, value: .string(prefix + "b")))),
          [rows[3]], "\(field) equal to a 508-byte value")
        try expectEqual(
          try await store.fetchRows(Query(entity: "Note", sort: [Sort(field)])).map { $0[0] },
          [.int(3), .int(2), .int(4), .int(1), .int(5)], "rows sorted by \(field)")
        try expectEqual(
          try await store.fetchRows(Query(entity: "Note", sort: [Sort(field, ascending: false)], limit: 2))
            .map { $0[0] },
          [.int(5), .int(1)], "the first two rows sorted by \(field), descending")
        let between =
          Filter.compare(field: field, op: .greater, value: .string(prefix + "a"))
          && .compare(field: field, op: .lessOrEqual, value: .string(prefix + "c"))
        try expectEqual(
          try await store.fetchRows(Query(entity: "Note", filter: between, sort: [Sort(field)])).map {
            $0[0]
          },
          [.int(4), .int(1)], "rows with \(field) in a range past the long prefix")
        try expectEqual(
          try await store.fetchRows(
            Query(entity: "Note", filter: .string(field: field, match: .hasPrefix, pattern: prefix + "b"))),
          [rows[3]], "rows whose \(field) has a 508-byte prefix")
        try expectEqual(
          try await store.fetchRows(
            Query(entity: "Note", filter: .compare(field: field, op: .equal, value: .string(megabyte)))),
          [], "rows with \(field) equal to a 1 MiB value")
        try expectEqual(
          try await store.fetchRows(
            Query(entity: "Note", filter: .isIn(field, [.string(megabyte), .string(prefix)]))),
          [rows[2]], "rows with \(field) in a list holding a 1 MiB value")
      }
      let error = try await expectThrows(.invalidValue, "a title of 509 bytes") {
        try await store.apply(ChangeSet([.insert(entity: "Note", row: note(6, longest + "z", "f"))]))
      }
      try expectEqual(error.field, "title", "the field the error names")
      try expectEqual(
        try await store.fetchRows(Query(entity: "Note")).count, rows.count, "rows after the refusal")
    },
    ConformanceCheck(
      "keys.long-string-id-refused",
      "A String id of 508 UTF-8 bytes is stored, read and deleted; a longer one (509 bytes, 1 MiB) fails "
        + "with invalidValue naming entity and id field, never the value, and applies nothing; reading or "
        + "deleting it finds nothing."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: [try slugSchema()])
      let row = Row([.string(longest), .int(1)])
      try await store.apply(ChangeSet([.insert(entity: "Slug", row: row)]))
      try expectEqual(
        try await store.getRows(entity: "Slug", ids: [.string(longest)]), [row], "the 508-byte id")
      try expectEqual(
        try await store.fetchRows(Query(entity: "Slug", sort: [Sort("id", ascending: false)])), [row],
        "rows sorted by id")
      for id in [longest + "z", megabyte] {
        for operation in [
          ChangeSet.Operation.insert(entity: "Slug", row: Row([.string(id), .int(2)])),
          .upsert(entity: "Slug", row: Row([.string(id), .int(2)])),
        ] {
          let error = try await expectThrows(.invalidValue, "an id of \(id.utf8.count) bytes") {
            try await store.apply(
              ChangeSet([.insert(entity: "Slug", row: Row([.string("a"), .int(3)])), operation]))
          }
          try expectEqual(error.entity, "Slug", "the entity the error names")
          try expectEqual(error.field, "id", "the field the error names")
          try expect(
            !error.description.contains("zzzz") && !error.description.contains("kkkkkkkk"),
            "the error names no value: \(show(error))")
        }
        try expectEqual(
          try await store.getRows(entity: "Slug", ids: [.string(id)]), [], "a get of a too-long id")
        try expectEqual(
          try await store.fetchRows(
            Query(entity: "Slug", filter: .compare(field: "id", op: .equal, value: .string(id)))),
          [], "a query for a too-long id")
        let deleted = try await store.apply(ChangeSet([.delete(entity: "Slug", id: .string(id))]))
        try expectEqual(deleted.deleted, 0, "rows deleted by a too-long id")
      }
      try expectEqual(
        try await store.fetchRows(Query(entity: "Slug")), [row], "rows after the refused batches")
      let deleted = try await store.apply(ChangeSet([.delete(entity: "Slug", id: .string(longest))]))
      try expectEqual(deleted.deleted, 1, "rows deleted by the 508-byte id")
    },
  ]
}
