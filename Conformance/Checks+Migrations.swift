@_spi(Backend) import Coffer
import Foundation

/// The entity most migration checks start from: people with a name, an age (some unknown), a
/// score, a flag, and a unique email.
private let peopleSchema: EntitySchema = {
  do {
    return try EntitySchema(
      name: "Person",
      fields: [
        Field("id", .int), Field("name", .string), Field("age", .int, isOptional: true),
        Field("score", .int), Field("active", .bool), Field("email", .string),
      ],
      idField: "id", indexes: [Index(["email"], isUnique: true), Index(["age"])])
  } catch {
    preconditionFailure("The fixture schema is invalid: \(error)")
  }
}()

/// Row `n` of the people fixture.
private func person(_ n: Int64) -> Row {
  Row([
    .int(n), .string("Person \(n) Surname\(n % 3)"), n % 4 == 0 ? .null : .int(20 + n % 50),
    .int(n * 7 % 100),
    .bool(n % 2 == 0), .string("p\(n)@example.com"),
  ])
}

/// A new store holding `count` people.
private func peopleStore(_ context: CheckContext, count: Int = 40) async throws -> Store {
  let store = try await context.store()
  try await store.prepare(schemas: [peopleSchema])
  try await store.apply(
    ChangeSet([.insertMany(entity: "Person", rows: RowSource(count: count) { person(Int64($0 + 1)) })]))
  return store
}

/// Every row of an entity in id order, in its stored schema.
private func rows(_ store: Store, _ entity: String) async throws -> [Row] {
  guard let schema = try await store.storedSchemas().first(where: { $0.name == entity }) else {
    throw CheckFailure("the store has no entity '\(entity)' after the migration")
  }
  try await store.prepare(schemas: [schema])
  var query = Query(entity: entity, sort: [Sort(schema.idField.name)])
  query.layout = schema
  return try await store.backend.fetch(query)
}

/// The stored schema of an entity.
private func storedSchema(_ store: Store, _ entity: String) async throws -> EntitySchema? {
  try await store.storedSchemas().first { $0.name == entity }
}

/// Runs `body`, which must fail with a ``CofferError`` of `code`, and returns the error.
private func expectFailure(
  _ code: CofferError.Code, _ what: String, _ body: () async throws -> Void
) async throws -> CofferError {
  do {
    try await body()
  } catch let error as CofferError {
    try expectEqual(error.code, code, "\(what): error code")
    return error
  }
  throw CheckFailure("\(what): expected \(code), but it succeeded")
}

extension ConformanceSuite {
  static let migrationChecks: [ConformanceCheck] =
    migrationStepChecks + migrationPlanChecks + migrationRewriteChecks + randomMigrationChecks
    + killedMigrationChecks

  private static let migrationStepChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "migration.rename-field-keeps-values", requires: .migrations,
      "renameField gives a field a new name in the stored schema, with every value, its index and its unique "
        + "constraint; the old name is gone, and no row is counted as touched."
    ) { context in
      let store = try await peopleStore(context)
      let before = try await rows(store, "Person")
      let report = try await store.migrate(
        MigrationPlan([.renameField("rename-email", entity: "Person", from: "email", to: "mail")]))
      try expectEqual(report.steps.map(\.outcome), [.applied], "outcome")
      try expectEqual(report.steps[0].rowsTouched, 0, "rows touched by a rename")
      guard let schema = try await storedSchema(store, "Person") else { throw CheckFailure("Person is gone") }
      try expectEqual(schema.fields.map(\.name), ["id", "name", "age", "score", "active", "mail"], "fields")
      try expectEqual(schema.indexes, [Index(["mail"], isUnique: true), Index(["age"])], "indexes follow")
      try expectEqual(try await rows(store, "Person"), before, "rows")
      let found = try await store.fetchRows(
        Query(entity: "Person", filter: .compare(field: "mail", op: .equal, value: .string("p7@example.com")))
      )
      try expectEqual(found.map { $0[0] }, [.int(7)], "a filter on the renamed field")
      let clash = try await expectFailure(.uniqueViolation, "a duplicate of a renamed unique field") {
        var duplicate = person(1)
        duplicate.values[0] = .int(1000)
        try await store.apply(ChangeSet([.insert(entity: "Person", row: duplicate)]))
      }
      try expectEqual(clash.entity, "Person", "the clash's entity")
    },
    ConformanceCheck(
      "migration.rename-entity-keeps-rows", requires: .migrations,
      "renameEntity moves an entity's rows, schema and indexes to the new name; the old name is no longer "
        + "stored, and a new entity may take it."
    ) { context in
      let store = try await peopleStore(context, count: 25)
      let before = try await rows(store, "Person")
      try await store.migrate(MigrationPlan([.renameEntity("rename", from: "Person", to: "Member")]))
      let names = try await store.storedSchemas().map(\.name)
      try expectEqual(names, ["Member"], "stored entities")
      try expectEqual(try await rows(store, "Member"), before, "rows under the new name")
      try expectEqual(
        try await storedSchema(store, "Member")?.indexes, peopleSchema.indexes, "indexes under the new name")
      try await store.prepare(schemas: [peopleSchema])
      try expectEqual(try await store.countRows(Query(entity: "Person")), 0, "a new entity with the old name")
    },
    ConformanceCheck(
      "migration.change-kind-converts-values", requires: .migrations,
      "changeKind converts every stored value of a field with its conversion (int to string here) and keeps "
        + "nulls null; the field's kind is the new one, and filters compare the new values."
    ) { context in
      let store = try await peopleStore(context, count: 30)
      let before = try await rows(store, "Person")
      let report = try await store.migrate(
        MigrationPlan([
          .changeKind("age-text", entity: "Person", field: "age", to: .string, using: .intToString)
        ]))
      try expectEqual(report.steps[0].rowsTouched, 30, "rows touched")
      try expectEqual(try await storedSchema(store, "Person")?.field(named: "age")?.kind, .string, "kind")
      let after = try await rows(store, "Person")
      try expectEqual(after.count, before.count, "rows")
      for (old, new) in zip(before, after) {
        let expected: Value =
          switch old[2] {
          case .int(let age): .string(String(age))
          default: .null
          }
        try expectEqual(new[2], expected, "age of \(old[0])")
        try expectEqual(
          Row(new.values.enumerated().filter { $0.offset != 2 }.map(\.element)),
          Row(old.values.enumerated().filter { $0.offset != 2 }.map(\.element)), "other fields of \(old[0])")
      }
      let found = try await store.countRows(
        Query(entity: "Person", filter: .compare(field: "age", op: .equal, value: .string("21"))))
      try expectEqual(found, before.count { $0[2] == .int(21) }, "rows found by the converted value")
    },
    ConformanceCheck(
      "migration.change-kind-extremes", requires: .migrations,
      "changeKind's conversions that never fail give the values FieldConversion gives for Int64's extremes, "
        + "zero, negatives, both Booleans and nulls, with every other field exact and an index on the "
        + "converted field still finding rows; making a field that holds nulls required fails naming the row."
    ) { context in
      let schema = try EntitySchema(
        name: "Extreme",
        fields: [
          Field("id", .int), Field("n", .int, isOptional: true), Field("flag", .bool, isOptional: true),
          Field("d", .double), Field("u", .uuid), Field("t", .string),
        ],
        idField: "id", indexes: [Index(["n"]), Index(["flag", "n"])])
      let numbers: [Value] = [.int(.min), .int(.max), .int(0), .int(-1), .int(42), .null, .int(.min + 1)]
      let flags: [Value] = [.bool(true), .bool(false), .null]
      let doubles: [Double] = [-0.0, .infinity, -.infinity, 0.1, 1e300, .leastNonzeroMagnitude, 3]
      let stored = (0..<21).map { index in
        Row([
          .int(Int64(index)), numbers[index % numbers.count], flags[index % flags.count],
          .double(doubles[index % doubles.count]),
          .uuid(UUID(uuid: (UInt8(index), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, UInt8(255 - index)))),
          .string("row \(index) é \u{0}"),
        ])
      }
      let store = try await context.store()
      try await store.prepare(schemas: [schema])
      try await store.apply(ChangeSet([.insertMany(entity: "Extreme", rows: RowSource(stored))]))
      try await store.migrate(
        MigrationPlan([
          .changeKind("n-text", entity: "Extreme", field: "n", to: .string, using: .intToString),
          .changeKind("flag-int", entity: "Extreme", field: "flag", to: .int, using: .boolToInt),
        ]))
      let after = try await rows(store, "Extreme")
      try expectEqual(after.count, stored.count, "rows")
      for (old, new) in zip(stored, after) {
        var expected = old
        if case .int(let number) = old[1] { expected.values[1] = .string(String(number)) }
        if case .bool(let flag) = old[2] { expected.values[2] = .int(flag ? 1 : 0) }
        try expectEqual(new, expected, "row \(old[0])")
        guard case .double(let was) = old[3], case .double(let now) = new[3] else {
          throw CheckFailure("row \(old[0]): d is no double after the migration")
        }
        try expectEqual(now.bitPattern, was.bitPattern, "row \(old[0]): d bit for bit")
      }
      let smallest = try await store.countRows(
        Query(entity: "Extreme", filter: .compare(field: "n", op: .equal, value: .string(String(Int64.min)))))
      try expectEqual(smallest, stored.count { $0[1] == .int(.min) }, "rows found by Int64.min as text")
      let trueAndZero = try await store.countRows(
        Query(
          entity: "Extreme",
          filter: .and([
            .compare(field: "flag", op: .equal, value: .int(1)),
            .compare(field: "n", op: .equal, value: .string("0")),
          ])))
      try expectEqual(
        trueAndZero, stored.count { $0[2] == .bool(true) && $0[1] == .int(0) }, "rows found by both")
      let error = try await expectFailure(.migrationFailed, "making flag, which holds nulls, required") {
        try await store.migrate(
          MigrationPlan([
            .changeKind("n-text", entity: "Extreme", field: "n", to: .string, using: .intToString),
            .changeKind("flag-int", entity: "Extreme", field: "flag", to: .int, using: .boolToInt),
            .changeKind(
              "flag-required-text", entity: "Extreme", field: "flag", to: .string, isOptional: false,
              using: .intToString),
          ]))
      }
      try expectEqual(error.entity, "Extreme", "the entity named")
      try expect(
        stored.contains { $0[0] == error.idValue && $0[2] == .null },
        "the row named holds a null flag (\(String(describing: error.idValue)))")
      try expectEqual(try await rows(store, "Extreme"), after, "rows after the failed step")
    },
    ConformanceCheck(
      "migration.change-kind-after-evolution", requires: .migrations,
      "changeKind converts rows stored before the entity's schema evolved (a field added at prepare, a field "
        + "renamed by a step) and rows stored after, alike: the old rows read the new field as its default."
    ) { context in
      let before = try EntitySchema(
        name: "Evolving", fields: [Field("id", .int), Field("n", .int), Field("flag", .bool)], idField: "id",
        indexes: [Index(["n"])])
      let after = try EntitySchema(
        name: "Evolving",
        fields: [
          Field("id", .int), Field("n", .int), Field("flag", .bool), Field("note", .string, default: "none"),
        ],
        idField: "id", indexes: [Index(["n"])])
      let store = try await context.store()
      try await store.prepare(schemas: [before])
      try await store.apply(
        ChangeSet([
          .insertMany(
            entity: "Evolving",
            rows: RowSource((0..<10).map { Row([.int($0), .int($0 * 1_000 - 3), .bool($0 % 3 == 0)]) }))
        ]))
      try await store.prepare(schemas: [after])
      try await store.apply(
        ChangeSet([
          .insertMany(
            entity: "Evolving",
            rows: RowSource(
              (10..<20).map { Row([.int($0), .int(-$0), .bool($0 % 2 == 0), .string("note \($0)")]) }))
        ]))
      try await store.migrate(
        MigrationPlan([
          .renameField("flag-named", entity: "Evolving", from: "flag", to: "isSet"),
          .changeKind("n-text", entity: "Evolving", field: "n", to: .string, using: .intToString),
          .changeKind("flag-int", entity: "Evolving", field: "isSet", to: .int, using: .boolToInt),
        ]))
      let rowsNow = try await rows(store, "Evolving")
      let expected = (0..<20).map { number -> Row in
        let old = number < 10
        let n = old ? Int64(number) * 1_000 - 3 : -Int64(number)
        let flag = old ? number % 3 == 0 : number % 2 == 0
        return Row([
          .int(Int64(number)), .string(String(n)), .int(flag ? 1 : 0),
          .string(old ? "none" : "note \(number)"),
        ])
      }
      try expectEqual(rowsNow, expected, "rows after the conversions")
      let found = try await store.countRows(
        Query(entity: "Evolving", filter: .compare(field: "n", op: .equal, value: .string("1997"))))
      try expectEqual(found, 1, "rows found through the index by a converted old row's value")
    },
    ConformanceCheck(
      "migration.failing-step-applies-nothing", requires: .migrations,
      "A step whose conversion fails on one row throws migrationFailed naming the step, entity, id and field "
        + "(never the value), and leaves every row, the schema and the record of steps as they were."
    ) { context in
      let store = try await peopleStore(context, count: 20)
      try await store.apply(
        ChangeSet([
          .update(
            entity: "Person",
            row: Row([.int(13), .string("x"), .int(3), .int(1), .bool(true), .string("p13@example.com")]))
        ]))
      let digest = try await store.digest()
      let error = try await expectFailure(.migrationFailed, "a name that is not a number") {
        try await store.migrate(
          MigrationPlan([
            .changeKind("name-as-int", entity: "Person", field: "name", to: .int, using: .stringToInt)
          ]))
      }
      try expectEqual(error.entity, "Person", "entity named")
      try expectEqual(error.field, "name", "field named")
      try expect(error.idValue != nil, "the error names the row's id")
      try expectMentions(error, ["name-as-int"], "the step named")
      try expect(!error.message.contains("Person 1 Surname"), "the message shows no value: \(error.message)")
      try expectEqual(try await store.digest(), digest, "digest after the failed step")
      try expectEqual(try await store.migrations(), [], "steps recorded")
    },
    ConformanceCheck(
      "migration.add-required-field-computed", requires: .migrations,
      "addField adds a required field with no default, its value computed from each stored row; the rows keep "
        + "their other values."
    ) { context in
      let store = try await peopleStore(context, count: 15)
      let before = try await rows(store, "Person")
      try await store.migrate(
        MigrationPlan([
          .addField("name-length", entity: "Person", Field("nameLength", .int)) { record in
            guard case .string(let name)? = record["name"] else { return .int(-1) }
            return .int(Int64(name.unicodeScalars.count))
          }
        ]))
      let schema = try await storedSchema(store, "Person")
      try expectEqual(schema?.field(named: "nameLength"), Field("nameLength", .int), "the new field")
      let after = try await rows(store, "Person")
      for (old, new) in zip(before, after) {
        guard case .string(let name) = old[1] else { throw CheckFailure("fixture name") }
        try expectEqual(new, Row(old.values + [.int(Int64(name.unicodeScalars.count))]), "row \(old[0])")
      }
    },
    ConformanceCheck(
      "migration.remove-field-removes-data", requires: .migrations,
      "removeField drops a field with its index; its data is gone: a field of that name added later reads null "
        + "in every old row."
    ) { context in
      let store = try await peopleStore(context, count: 12)
      try await store.migrate(MigrationPlan([.removeField("drop-age", entity: "Person", field: "age")]))
      guard let schema = try await storedSchema(store, "Person") else { throw CheckFailure("Person is gone") }
      try expectEqual(schema.fields.map(\.name), ["id", "name", "score", "active", "email"], "fields")
      try expectEqual(schema.indexes, [Index(["email"], isUnique: true)], "indexes")
      let readded = try EntitySchema(
        name: "Person", fields: schema.fields + [Field("age", .int, isOptional: true)], idField: "id",
        indexes: schema.indexes)
      try await store.prepare(schemas: [readded])
      let ages = try await store.fetchRows(Query(entity: "Person")).map { $0[5] }
      try expectEqual(ages.count, 12, "rows")
      try expect(ages.allSatisfy(\.isNull), "a re-added field reads null in old rows: \(ages)")
    },
    ConformanceCheck(
      "migration.remove-entity", requires: .migrations,
      "removeEntity removes an entity with its rows; other entities stay as they were."
    ) { context in
      let store = try await peopleStore(context, count: 5)
      let other = try EntitySchema(
        name: "Note", fields: [Field("id", .string), Field("text", .string)], idField: "id")
      try await store.prepare(schemas: [other])
      try await store.apply(ChangeSet([.insert(entity: "Note", row: Row([.string("a"), .string("kept")]))]))
      try await store.migrate(MigrationPlan([.removeEntity("drop-people", entity: "Person")]))
      try expectEqual(try await store.storedSchemas().map(\.name), ["Note"], "stored entities")
      try expectEqual(
        try await rows(store, "Note"), [Row([.string("a"), .string("kept")])], "the other entity")
    },
    ConformanceCheck(
      "migration.add-index-and-unique-clash", requires: .migrations,
      "addIndex adds an index the store then keeps; a unique index that stored rows break fails with "
        + "migrationFailed naming the clashing ids, and changes nothing."
    ) { context in
      let store = try await peopleStore(context, count: 20)
      try await store.migrate(MigrationPlan([.addIndex("by-score", entity: "Person", Index(["score"]))]))
      try expectEqual(
        try await storedSchema(store, "Person")?.indexes,
        peopleSchema.indexes + [Index(["score"])], "indexes after adding one")
      let digest = try await store.digest()
      // Scores are n * 7 % 100: ids 1 and 101 would share one, but ids 1…20 do not — so make two.
      try await store.apply(
        ChangeSet([
          .update(
            entity: "Person",
            row: Row(person(5).values.enumerated().map { $0.offset == 3 ? .int(7) : $0.element }))
        ]))
      let clash = try await expectFailure(.migrationFailed, "a unique index rows break") {
        try await store.migrate(
          MigrationPlan([
            .addIndex("by-score", entity: "Person", Index(["score"])),
            .addIndex("unique-score", entity: "Person", Index(["score", "active"], isUnique: true)),
          ]))
      }
      try expect(clash.message.contains("ids 1, 5"), "the clashing ids are named: \(clash.message)")
      try expect(clash.message.contains("'unique-score'"), "the step is named: \(clash.message)")
      try expectEqual(try await storedSchema(store, "Person")?.indexes.count, 3, "indexes after the failure")
      try expect(try await store.digest() != digest, "the update before the failed step stays")
      try expectEqual(try await store.migrations().map(\.name), ["by-score"], "steps recorded")
    },
    ConformanceCheck(
      "migration.drop-index-lifts-unique", requires: .migrations,
      "dropIndex removes a unique constraint: rows sharing the value can then be stored."
    ) { context in
      let store = try await peopleStore(context, count: 6)
      try await store.migrate(
        MigrationPlan([.dropIndex("no-unique-email", entity: "Person", fields: ["email"])]))
      try expectEqual(try await storedSchema(store, "Person")?.indexes, [Index(["age"])], "indexes")
      var twin = person(1)
      twin.values[0] = .int(99)
      try await store.apply(ChangeSet([.insert(entity: "Person", row: twin)]))
      let found = try await store.countRows(
        Query(
          entity: "Person", filter: .compare(field: "email", op: .equal, value: .string("p1@example.com"))))
      try expectEqual(found, 2, "rows sharing the email")
    },
    ConformanceCheck(
      "migration.custom-step-splits-and-moves", requires: .migrations,
      "A custom step over DynamicRecords can split a field in two (rewrite) and move data into a new entity "
        + "(create and insert), all in one step."
    ) { context in
      let store = try await peopleStore(context, count: 9)
      let split = try EntitySchema(
        name: "Person",
        fields: [
          Field("id", .int), Field("first", .string), Field("last", .string),
          Field("age", .int, isOptional: true),
          Field("score", .int), Field("active", .bool), Field("email", .string),
        ], idField: "id", indexes: [Index(["email"], isUnique: true)])
      let scores = try EntitySchema(
        name: "Score", fields: [Field("person", .int), Field("points", .int)], idField: "person")
      try await store.migrate(
        MigrationPlan([
          .custom("split-name", summary: "split names, move scores") { context in
            let people = try DynamicEntity(schema: split)
            try context.rewrite("Person", as: split) { old in
              guard case .string(let name)? = old["name"] else { return nil }
              let parts = name.split(separator: " ", maxSplits: 1).map(String.init)
              var attributes = old.attributes
              attributes["name"] = nil
              attributes["first"] = .string(parts[0])
              attributes["last"] = .string(parts.count > 1 ? parts[1] : "")
              return try DynamicRecord(people, attributes: attributes)
            }
            try context.create(scores)
            let target = try DynamicEntity(schema: scores)
            try context.forEachRecord(of: "Person") { person in
              try context.insert(
                DynamicRecord(
                  target, attributes: ["person": person["id"] ?? .null, "points": person["score"] ?? .null]))
            }
          }
        ]))
      let people = try await rows(store, "Person")
      try expectEqual(people.count, 9, "people")
      try expectEqual(
        people.first.map { Array($0.values.prefix(3)) }, [.int(1), .string("Person"), .string("1 Surname1")],
        "a split name")
      let moved = try await rows(store, "Score")
      try expectEqual(moved.map { $0[1] }, (1...9).map { .int(Int64($0) * 7 % 100) }, "moved scores")
    },
  ]

  private static let migrationPlanChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "migration.record-kept-in-store", requires: .migrations,
      "The store records each step it ran — name, position, time and rows touched — in order; the record "
        + "survives closing and reopening."
    ) { context in
      let store = try await peopleStore(context, count: 10)
      let start = Date().addingTimeInterval(-1)
      try await store.migrate(
        MigrationPlan([
          .renameField("a", entity: "Person", from: "name", to: "fullName"),
          .addIndex("b", entity: "Person", Index(["score"])),
        ]))
      let record = try await store.migrations()
      try expectEqual(record.map(\.name), ["a", "b"], "names")
      try expectEqual(record.map(\.position), [0, 1], "positions")
      try expectEqual(record.map(\.rowsTouched), [0, 10], "rows touched")
      try expect(
        record.allSatisfy { $0.appliedAt >= start && $0.appliedAt <= Date().addingTimeInterval(1) },
        "times recorded")
      if context.target.capabilities.contains(.reopenable) {
        let reopened = try await context.reopen(store)
        try expectEqual(try await reopened.migrations(), record, "the record after reopening")
      }
    },
    ConformanceCheck(
      "migration.plan-run-twice-is-a-no-op", requires: .migrations,
      "Migrating again with the same plan runs no step, reports each as already applied and changes nothing; "
        + "a plan grown by a step runs only the new one."
    ) { context in
      let store = try await peopleStore(context, count: 10)
      let first = [
        MigrationStep.changeKind(
          "score-double", entity: "Person", field: "score", to: .double, using: .intToDouble)
      ]
      try await store.migrate(MigrationPlan(first))
      let digest = try await store.digest()
      let again = try await store.migrate(MigrationPlan(first))
      try expectEqual(again.steps.map(\.outcome), [.alreadyApplied], "outcomes the second time")
      try expectEqual(try await store.digest(), digest, "digest after the second run")
      let grown = try await store.migrate(
        MigrationPlan(first + [.renameField("rename", entity: "Person", from: "active", to: "enabled")]))
      try expectEqual(grown.steps.map(\.outcome), [.alreadyApplied, .applied], "outcomes of the grown plan")
      try expectEqual(try await store.migrations().map(\.name), ["score-double", "rename"], "steps recorded")
    },
    ConformanceCheck(
      "migration.unknown-step-refused", requires: .migrations,
      "A store that ran a step the plan does not have (a newer app), or another step at a position, refuses "
        + "the plan with unknownMigration naming the step, and is left untouched."
    ) { context in
      let store = try await peopleStore(context, count: 8)
      try await store.migrate(
        MigrationPlan([
          .renameField("v2", entity: "Person", from: "name", to: "label"),
          .addIndex("v3", entity: "Person", Index(["score"])),
        ]))
      let digest = try await store.digest()
      let newer = try await expectFailure(.unknownMigration, "an older plan") {
        try await store.migrate(
          MigrationPlan([.renameField("v2", entity: "Person", from: "name", to: "label")]))
      }
      try expectMentions(newer, ["v3"], "the unknown step")
      let edited = try await expectFailure(.unknownMigration, "a plan edited after shipping") {
        try await store.migrate(
          MigrationPlan([
            .renameField("v2-edited", entity: "Person", from: "name", to: "label"),
            .addIndex("v3", entity: "Person", Index(["score"])),
          ]))
      }
      try expectMentions(edited, ["v2", "v2-edited"], "both names")
      try expectEqual(try await store.digest(), digest, "digest")
      try expectEqual(try await store.migrations().map(\.name), ["v2", "v3"], "record")
    },
    ConformanceCheck(
      "migration.failed-step-keeps-earlier-steps", requires: .migrations,
      "When a step fails, the steps before it stay applied and recorded, the failed one and those after it "
        + "are not; fixing the plan and migrating again continues after the last recorded step."
    ) { context in
      let store = try await peopleStore(context, count: 10)
      _ = try await expectFailure(.migrationFailed, "a plan with a failing middle step") {
        try await store.migrate(
          MigrationPlan([
            .renameField("one", entity: "Person", from: "name", to: "label"),
            .removeField("two", entity: "Person", field: "nothing-here"),
            .addIndex("three", entity: "Person", Index(["score"])),
          ]))
      }
      try expectEqual(try await store.migrations().map(\.name), ["one"], "record after the failure")
      try expectEqual(
        try await storedSchema(store, "Person")?.fields.map(\.name),
        ["id", "label", "age", "score", "active", "email"], "fields after the failure")
      try expectEqual(try await storedSchema(store, "Person")?.indexes.count, 2, "indexes after the failure")
      let fixed = try await store.migrate(
        MigrationPlan([
          .renameField("one", entity: "Person", from: "name", to: "label"),
          .removeField("two", entity: "Person", field: "active"),
          .addIndex("three", entity: "Person", Index(["score"])),
        ]))
      try expectEqual(
        fixed.steps.map(\.outcome), [.alreadyApplied, .applied, .applied], "outcomes when fixed")
    },
    ConformanceCheck(
      "migration.rehearsal-leaves-store-untouched", requires: .migrations,
      "rehearseMigration runs a plan on a copy: it reports each step's rows and the first failure, gives the "
        + "digest the plan leaves, and changes nothing in the store — which migrate then brings to that digest."
    ) { context in
      let store = try await peopleStore(context, count: 16)
      let digest = try await store.digest()
      let good = MigrationPlan([
        .renameField("a", entity: "Person", from: "name", to: "label"),
        .changeKind("b", entity: "Person", field: "age", to: .double, using: .intToDouble),
      ])
      let rehearsal = try await store.rehearseMigration(good)
      try expect(rehearsal.isRehearsal, "a rehearsal says so")
      try expectEqual(rehearsal.steps.map(\.outcome), [.applied, .applied], "outcomes")
      try expectEqual(rehearsal.steps.map(\.rowsTouched), [0, 16], "rows touched")
      try expectEqual(try await store.digest(), digest, "digest after the rehearsal")
      try expectEqual(try await store.migrations(), [], "record after the rehearsal")
      let bad = try await store.rehearseMigration(
        MigrationPlan([
          .renameField("a", entity: "Person", from: "name", to: "label"),
          .changeKind("b", entity: "Person", field: "label", to: .int, using: .stringToInt),
          .removeField("c", entity: "Person", field: "age"),
        ]))
      guard case .failed(let code, _) = bad.steps[1].outcome else {
        throw CheckFailure("the failing step is reported failed, not \(bad.steps[1].outcome)")
      }
      try expectEqual(code, "migrationFailed", "the failure's code")
      try expectEqual(bad.steps[2].outcome, .notRun, "the step after the failure")
      try expectEqual(try await store.digest(), digest, "digest after the failing rehearsal")
      try await store.migrate(good)
      try expectEqual(
        try await store.digest(), rehearsal.digest, "the store after migrating, against the rehearsal")
    },
    ConformanceCheck(
      "migration.typed-values-after-plan", requires: .migrations,
      "After a plan renames a field and converts another, the app's new Storable type reads and writes the "
        + "migrated rows."
    ) { context in
      let store = try await context.store()
      try await store.insert([
        MigrationV1Item(id: 1, title: "one", rank: 10), MigrationV1Item(id: 2, title: "two", rank: 20),
      ])
      try await store.migrate(
        MigrationPlan([
          .renameField("title-to-name", entity: "MigrationItem", from: "title", to: "name"),
          .changeKind(
            "rank-to-text", entity: "MigrationItem", field: "rank", to: .string, using: .intToString),
        ]))
      let items = try await store.query(MigrationV2Item.self).sort([Sort("id")]).fetch()
      try expectEqual(
        items,
        [MigrationV2Item(id: 1, name: "one", rank: "10"), MigrationV2Item(id: 2, name: "two", rank: "20")],
        "typed values")
      try await store.insert(MigrationV2Item(id: 3, name: "three", rank: "x"))
      try expectEqual(try await store.query(MigrationV2Item.self).count(), 3, "typed count after an insert")
    },
    ConformanceCheck(
      "migration.invalid-plan-refused", requires: .migrations,
      "A plan with two steps of one name is refused with invalidConfiguration before anything runs."
    ) { context in
      let store = try await peopleStore(context, count: 3)
      _ = try await expectFailure(.invalidConfiguration, "a repeated step name") {
        try await store.migrate(
          MigrationPlan([
            .renameField("same", entity: "Person", from: "name", to: "label"),
            .addIndex("same", entity: "Person", Index(["score"])),
          ]))
      }
      try expectEqual(try await store.migrations(), [], "record")
    },
  ]
}

/// A model before a migration.
struct MigrationV1Item: Storable, Equatable {
  static var entityName: String { "MigrationItem" }
  var id: Int64
  var title: String
  var rank: Int64
}

/// The same model after: `title` renamed to `name`, `rank` now text.
struct MigrationV2Item: Storable, Equatable {
  static var entityName: String { "MigrationItem" }
  var id: Int64
  var name: String
  var rank: String
}
