import Coffer

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
        try await store.count(PersonAddsOptional.self, where: FieldRef("nickname") == nil), 2,
        "count(nickname == nil)")
    },
    ConformanceCheck(
      "schema.added-default-field-reads-default", requires: [.reopenable, .schemaEvolution],
      "After reopening, a new field with a default in fieldDefaults reads as that default in old rows."
    ) { context in
      let store = try await context.reopen(try await context.store(with: peopleV1))
      try expectEqual(try await store.all(PersonAddsDefault.self).map(\.level), [7, 7], "levels of old rows")
      try expectEqual(
        try await store.count(PersonAddsDefault.self, where: FieldRef("level") == 7), 2, "count(level == 7)")
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
      try expectEqual(try await store.count(PersonDropsAge.self), 3, "count after inserting without age")
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
  ]
}
