@_spi(Backend) import Coffer

/// Two people stored with the first version of the Person entity.
let peopleV1 = [PersonV1(id: 1, name: "Ann", age: 30), PersonV1(id: 2, name: "Bo", age: 41)]

extension ConformanceSuite {
  static let schemaChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "schema.added-optional-field-reads-nil", requires: [.reopenable, .schemaEvolution],
      "After reopening, a new optional field reads as nil in rows stored before it existed."
    ) { context in
      let store = try await context.reopen(try await context.store(with: peopleV1))
      let people = try await store.all(PersonAddsOptional.self)
      try expectEqual(
        people,
        [PersonAddsOptional(id: 1, name: "Ann", age: 30), PersonAddsOptional(id: 2, name: "Bo", age: 41)],
        "people read with the new optional nickname")
      try expectEqual(
        try await store.get(PersonAddsOptional.self, id: 2), PersonAddsOptional(id: 2, name: "Bo", age: 41),
        "person 2 read by id with the new optional nickname")
      try await store.insert(PersonAddsOptional(id: 3, name: "Cy", age: 5, nickname: "C"))
      try expectEqual(
        try await store.query(PersonAddsOptional.self).filter(FieldRef("nickname") == nil).count(), 2,
        "count(nickname == nil)")
    },
    ConformanceCheck(
      "schema.old-rows-filtered-sorted-and-limited", requires: [.reopenable, .schemaEvolution],
      "Rows stored before a field was added, mixed with rows stored after, are filtered, sorted, "
        + "paged and counted as the same rows stored under the new schema would be."
    ) { context in
      let old = (1...40).map { PersonV1(id: $0, name: "person \(($0 * 7) % 40)", age: ($0 * 13) % 50) }
      let store = try await context.reopen(try await context.store(with: old))
      let new = (41...60).map {
        PersonAddsOptional(id: $0, name: "person \(($0 * 7) % 40)", age: ($0 * 13) % 50, nickname: "n\($0)")
      }
      try await store.insert(new)
      let all = old.map { PersonAddsOptional(id: $0.id, name: $0.name, age: $0.age) } + new
      let adults = all.filter { $0.age >= 18 }
      // Names descending, ties by id ascending.
      let byName = adults.sorted { $0.name != $1.name ? $0.name > $1.name : $0.id < $1.id }
      for (offset, limit) in [(0, 5), (3, 7), (0, 100), (30, 10)] {
        let page = try await store.query(PersonAddsOptional.self).filter(FieldRef("age") >= 18)
          .sort(\.name, .descending).offset(offset).limit(limit).fetch()
        let expected = Array(byName.dropFirst(offset).prefix(limit))
        try expectEqual(
          page, expected, "age >= 18 sorted by name descending, offset \(offset), limit \(limit)")
      }
      let youngest = try await store.query(PersonAddsOptional.self).filter(FieldRef("age") < 18)
        .sort(\.age).limit(3).fetch()
      try expectEqual(
        youngest, Array(all.filter { $0.age < 18 }.sorted { ($0.age, $0.id) < ($1.age, $1.id) }.prefix(3)),
        "the 3 youngest under 18")
      try expectEqual(
        try await store.query(PersonAddsOptional.self).filter(FieldRef("age") >= 18).count(), adults.count,
        "count(age >= 18)")
    },
    ConformanceCheck(
      "schema.added-default-field-reads-default", requires: [.reopenable, .schemaEvolution],
      "After reopening, a new field with a default in fieldDefaults reads as that default in old rows."
    ) { context in
      let store = try await context.reopen(try await context.store(with: peopleV1))
      try expectEqual(try await store.all(PersonAddsDefault.self).map(\.level), [7, 7], "levels of old rows")
      try expectEqual(
        try await store.query(PersonAddsDefault.self).filter(FieldRef("level") == 7).count(), 2,
        "count(level == 7)")
    },
    ConformanceCheck(
      "schema.dropped-field-ignored", requires: [.reopenable, .schemaEvolution],
      "After reopening, a field no longer declared is ignored and the other fields read unchanged."
    ) { context in
      let store = try await context.reopen(try await context.store(with: peopleV1))
      try expectEqual(
        try await store.all(PersonDropsAge.self),
        [PersonDropsAge(id: 1, name: "Ann"), PersonDropsAge(id: 2, name: "Bo")],
        "people read without age")
      try await store.insert(PersonDropsAge(id: 3, name: "Cy"))
      try expectEqual(
        try await store.query(PersonDropsAge.self).count(), 3, "count after inserting without age")
    },
    ConformanceCheck(
      "schema.changed-type-is-mismatch", requires: [.reopenable, .schemaEvolution],
      "A field whose type changed fails at prepare with schemaMismatch naming entity, field and both kinds."
    ) { context in
      let store = try await context.reopen(try await context.store(with: peopleV1))
      let error = try await expectThrows(.schemaMismatch, "prepare with age changed from Int64 to String") {
        try await store.prepare([PersonRetypesAge.self])
      }
      try expectEqual(error.entity, "Person", "error.entity")
      try expectEqual(error.field, "age", "error.field")
      try expectMentions(error, ["int", "string"], "schemaMismatch message")
    },
    ConformanceCheck(
      "schema.mismatch-leaves-data", requires: [.reopenable, .schemaEvolution],
      "After a schemaMismatch, reopening with the old type finds the data untouched."
    ) { context in
      let first = try await context.reopen(try await context.store(with: peopleV1))
      try await expectThrows(.schemaMismatch, "prepare with age changed to String") {
        try await first.prepare([PersonRetypesAge.self])
      }
      let again = try await context.reopen(first)
      try expectEqual(try await again.all(PersonV1.self), peopleV1, "people read with the first version")
    },
    ConformanceCheck(
      "schema.new-required-field-is-mismatch", requires: [.reopenable, .schemaEvolution],
      "A new required field with no default fails at prepare with schemaMismatch naming it."
    ) { context in
      let store = try await context.reopen(try await context.store(with: peopleV1))
      let error = try await expectThrows(.schemaMismatch, "prepare with a new required email") {
        try await store.prepare([PersonAddsRequired.self])
      }
      try expectEqual(error.field, "email", "error.field")
      try expectEqual(try await store.all(PersonV1.self), peopleV1, "people after the mismatch")
    },
    ConformanceCheck(
      "schema.default-breaking-unique-is-violation", requires: [.reopenable, .schemaEvolution],
      "A field made required whose default gives rows the same unique value fails at prepare with uniqueViolation naming entity, field and the smallest clashing id; nothing changes."
    ) { context in
      let badges = [BadgeV1(id: 3, code: nil), BadgeV1(id: 1, code: 7), BadgeV1(id: 2, code: nil)]
      let store = try await context.reopen(try await context.store(with: badges))
      let error = try await expectThrows(.uniqueViolation, "prepare making code required with default 5") {
        try await store.prepare([BadgeRequiresCode.self])
      }
      try expectEqual(error.entity, "Badge", "error.entity")
      try expectEqual(error.field, "code", "error.field")
      try expectEqual(error.id, "2", "error.id (the smallest id of the rows that would clash)")
      let again = try await context.reopen(store)
      try expectEqual(
        try await again.all(BadgeV1.self), badges.sorted { $0.id < $1.id }, "badges after the violation")
      try await again.insert(BadgeV1(id: 4, code: nil))
      try await expectThrows(.uniqueViolation, "insert of a taken code after the violation") {
        try await again.insert(BadgeV1(id: 5, code: 7))
      }
    },
    ConformanceCheck(
      "schema.new-unique-index-names-smallest-clash", requires: [.reopenable, .schemaEvolution],
      "A new unique index that stored rows break fails at prepare with uniqueViolation naming the smallest id among the clashing rows."
    ) { context in
      let labels = [
        LabelV1(id: 9, text: "a"), LabelV1(id: 5, text: "b"), LabelV1(id: 3, text: "b"),
        LabelV1(id: 2, text: "a"),
        LabelV1(id: 4, text: nil), LabelV1(id: 1, text: nil), LabelV1(id: 7, text: "c"),
      ]
      let store = try await context.reopen(try await context.store(with: labels))
      let error = try await expectThrows(.uniqueViolation, "prepare making Label.text unique") {
        try await store.prepare([LabelUniqueText.self])
      }
      try expectEqual(error.entity, "Label", "error.entity")
      try expectEqual(error.field, "text", "error.field")
      try expectEqual(error.id, "2", "error.id (the smallest of the clashing ids 2, 3, 5, 9)")
      let named = [
        NamedLabelV1(id: "zed", text: "x"), NamedLabelV1(id: "b", text: "y"),
        NamedLabelV1(id: "a9", text: "x"),
        NamedLabelV1(id: "a10", text: "y"), NamedLabelV1(id: "a", text: "z"),
        NamedLabelV1(id: "A", text: nil),
        NamedLabelV1(id: "0", text: nil),
      ]
      try await store.insert(named)
      let reopened = try await context.reopen(store)
      let other = try await expectThrows(.uniqueViolation, "prepare making NamedLabel.text unique") {
        try await reopened.prepare([NamedLabelUniqueText.self])
      }
      try expectEqual(other.entity, "NamedLabel", "error.entity")
      try expectEqual(
        other.id, Value.string("a10").description, "error.id (the smallest clashing id by code point)")
      try expectEqual(
        try await reopened.query(LabelV1.self).count(), labels.count, "labels after the violations")
    },
    ConformanceCheck(
      "schema.required-field-with-null-default-is-mismatch", requires: [.schemaEvolution],
      "Making an optional field required with a null default (which fills nothing) fails with schemaMismatch "
        + "naming the field, and the stored rows keep their nulls."
    ) { context in
      let store = try await context.store()
      let optional = try EntitySchema(
        name: "Level", fields: [Field("id", .int), Field("value", .int, isOptional: true)], idField: "id")
      let required = try EntitySchema(
        name: "Level", fields: [Field("id", .int), Field("value", .int, default: .null)], idField: "id")
      try await store.prepare(schemas: [optional])
      try await store.apply(ChangeSet([.insert(entity: "Level", row: Row([1, .null]))]))
      let error = try await expectThrows(.schemaMismatch, "prepare with value required, default null") {
        try await store.prepare(schemas: [required])
      }
      try expectEqual(error.field, "value", "error.field")
      try expectEqual(
        try await store.fetchRows(Query(entity: "Level")), [Row([1, .null])], "rows after the refused prepare"
      )
    },
    ConformanceCheck(
      "schema.stored-schemas-listed",
      "storedSchemas() lists every prepared entity, sorted by name, each with exactly its schema: kinds, optionality, defaults, indexes, unique constraints."
    ) { context in
      let store = try await context.store()
      try expectEqual(try await store.storedSchemas(), [], "entities of a new store")
      try await store.prepare([PersonV1.self])
      let ledger = try listedLedgerSchema()
      try await store.prepare(schemas: [ledger])
      let person = try EntitySchema(for: PersonV1.self)
      try expectEqual(
        try await store.storedSchemas(), [ledger, person].sorted { $0.name < $1.name }, "entities listed")
      try await store.insert(peopleV1)
      try expectEqual(
        try await store.storedSchemas().map(\.name), ["Ledger", "Person"], "entities listed after an insert")
    },
    ConformanceCheck(
      "schema.stored-schemas-after-reopen", requires: [.reopenable, .schemaEvolution],
      "A reopened store lists its entities before anything is prepared, and an evolved entity with its new schema."
    ) { context in
      let first = try await context.store(with: peopleV1)
      let ledger = try listedLedgerSchema()
      try await first.prepare(schemas: [ledger])
      let person = try EntitySchema(for: PersonV1.self)
      let store = try await context.reopen(first)
      try expectEqual(
        try await store.storedSchemas(), [ledger, person], "entities listed after reopening, nothing prepared"
      )
      try await store.prepare([PersonAddsOptional.self])
      try expectEqual(
        try await store.storedSchemas(), [ledger, try EntitySchema(for: PersonAddsOptional.self)],
        "entities listed after Person gained an optional field")
      let again = try await context.reopen(store)
      try expectEqual(
        try await again.storedSchemas().last, try EntitySchema(for: PersonAddsOptional.self),
        "Person listed after reopening again")
    },
    ConformanceCheck(
      "schema.failed-evolution-then-equivalent-name", requires: [.schemaEvolution],
      "After an evolution fails, another that adds a field whose name Unicode calls equal but whose bytes differ "
        + "(\"\u{2126}\" then \"\u{03A9}\") fails or succeeds on its own merits, never on the first one's leftovers."
    ) { context in
      let store = try await context.store()
      let base = [Field("id", .int), Field("a", .int)]
      try await store.prepare(schemas: [try EntitySchema(name: "Ohm", fields: base, idField: "id")])
      try await store.apply(
        ChangeSet([.insert(entity: "Ohm", row: Row([1, 1])), .insert(entity: "Ohm", row: Row([2, 2]))]))
      let ohm = try EntitySchema(
        name: "Ohm", fields: base + [Field("\u{2126}", .string, default: "same")], idField: "id",
        indexes: [.unique("\u{2126}")])
      try await expectThrows(.uniqueViolation, "a unique field whose default every row would share") {
        try await store.prepare(schemas: [ohm])
      }
      let omega = try EntitySchema(
        name: "Ohm", fields: base + [Field("\u{03A9}", .int, isOptional: true, default: 7)], idField: "id",
        indexes: [.unique("\u{03A9}")])
      try await expectThrows(.uniqueViolation, "the same again under the other spelling of the name") {
        try await store.prepare(schemas: [omega])
      }
      let nullable = try EntitySchema(
        name: "Ohm", fields: base + [Field("\u{03A9}", .int, isOptional: true)], idField: "id",
        indexes: [.unique("\u{03A9}")])
      try await store.prepare(schemas: [nullable])
      try expectEqual(
        try await store.fetchRows(Query(entity: "Ohm")), [Row([1, 1, .null]), Row([2, 2, .null])],
        "rows after the evolution that holds")
    },
  ]
}

/// An entity prepared from a run-time schema with something of every part a schema has: an
/// optional field, defaults (one null), a unique constraint over two fields and a plain index.
func listedLedgerSchema() throws -> EntitySchema {
  try EntitySchema(
    name: "Ledger",
    fields: [
      Field("id", .uuid), Field("account", .string), Field("sequence", .int),
      Field("amount", .double, default: .double(0)), Field("memo", .string, isOptional: true, default: .null),
      Field("booked", .date, isOptional: true), Field("payload", .bytes, isOptional: true),
      Field("cleared", .bool, default: .bool(false)),
    ],
    idField: "id", indexes: [.unique("account", "sequence"), .on("booked")])
}
