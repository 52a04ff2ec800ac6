@_spi(Backend) import Coffer
import Foundation

/// Notebooks and notes known only at run time: a note refers to its notebook, cascading.
private func notebookEntities(referring: Bool = true) throws -> (
  notebooks: DynamicEntity, notes: DynamicEntity
) {
  let notebooks = try DynamicEntity(
    name: "DynNotebook", fields: [Field("key", .string), Field("title", .string)], idAttribute: "key")
  let notes = try DynamicEntity(
    name: "DynNote",
    fields: [
      Field("id", .int), Field("notebook", .string), Field("title", .string), Field("pinned", .bool),
    ],
    indexes: [.on("notebook")],
    references: referring
      ? [EntityReference(field: "notebook", entity: "DynNotebook", onDelete: .cascade)] : [])
  return (notebooks, notes)
}

extension ConformanceSuite {
  static let dynamicRecordChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "dynamic.exists-and-select",
      "For records known only at run time, exists says whether a filter matches any record, and select "
        + "returns the chosen attributes of the matching records, in the order asked, sorted and limited."
    ) { context in
      let store = try await context.store()
      let (notebooks, notes) = try notebookEntities(referring: false)
      try await store.insert(try DynamicRecord(notebooks, attributes: ["key": "home", "title": "Home"]))
      for id in 1...6 {
        try await store.insert(
          try DynamicRecord(
            notes,
            attributes: [
              "id": .int(Int64(id)), "notebook": "home", "title": .string("note \(7 - id)"),
              "pinned": .bool(id.isMultiple(of: 2)),
            ]))
      }
      try expectEqual(try await store.exists(notes), true, "exists with no filter")
      try expectEqual(try await store.exists(notes, where: FieldRef("pinned") == true), true, "exists pinned")
      try expectEqual(try await store.exists(notes, where: FieldRef("id") > 6), false, "exists id > 6")
      let selected = try await store.select(
        ["title", "id"], of: notes, where: FieldRef("pinned") == true, sort: [Sort("title")], limit: 2)
      try expectEqual(
        selected, [[.string("note 1"), .int(6)], [.string("note 3"), .int(4)]],
        "title and id of the first two pinned notes by title")
      try await expectThrows(.invalidQuery, "selecting an attribute the entity lacks") {
        try await store.select(["title", "nope"], of: notes)
      }
    },
    ConformanceCheck(
      "dynamic.references-kept", requires: .preconditions,
      "A DynamicEntity's references are enforced like a typed model's: a record referring to a missing row "
        + "is refused (referenceViolation), and deleting the referenced record cascades to its records."
    ) { context in
      let store = try await context.store()
      let (notebooks, notes) = try notebookEntities()
      try await store.prepare([notebooks, notes])
      try await store.insert(try DynamicRecord(notebooks, attributes: ["key": "work", "title": "Work"]))
      for id in 1...3 {
        try await store.insert(
          try DynamicRecord(
            notes,
            attributes: ["id": .int(Int64(id)), "notebook": "work", "title": "t", "pinned": false]))
      }
      try await expectThrows(.referenceViolation, "a note in a notebook that is not stored") {
        try await store.insert(
          try DynamicRecord(
            notes, attributes: ["id": 9, "notebook": "nowhere", "title": "t", "pinned": false]))
      }
      let work = try await store.record(notebooks, id: "work")
      guard let work else { throw CheckFailure("the notebook was not stored") }
      try await store.delete(work)
      try expectEqual(try await store.records(notes).count, 0, "notes left after their notebook's delete")
    },
    ConformanceCheck(
      "select.enum-properties",
      "A selected enum property reads back as its case, whether its raw value is a string or an integer."
    ) { context in
      let samples = [
        Sample(id: 1, color: .blue, level: .extreme), Sample(id: 2, color: .green, level: .high),
      ]
      let store = try await context.store(with: samples)
      let rows = try await store.query(Sample.self).sort(\.id).select(\.color, \.level).fetch()
      try expectEqual(try rows.map { try $0.value(\.color) }, [.blue, .green], "colors")
      try expectEqual(try rows.map { try $0.value(\.level) }, [.extreme, .high], "levels")
    },
  ]
}
