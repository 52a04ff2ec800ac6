@_spi(Backend) import Coffer

/// The `Race` entity as first prepared: an id and one number.
private func raceV1() throws -> EntitySchema {
  try EntitySchema(name: "Race", fields: [Field("id", .int), Field("a", .int)], idField: "id")
}

/// The `Race` entity with a field put before `a`, so a row of the first version read in this
/// layout would put `a`'s value in `b`.
private func raceV2() throws -> EntitySchema {
  try EntitySchema(
    name: "Race", fields: [Field("id", .int), Field("b", .int, default: .int(7)), Field("a", .int)],
    idField: "id")
}

extension ConformanceSuite {
  static let schemaRaceChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "schema.prepare-racing-batches-keeps-rows-whole", requires: [.schemaEvolution],
      "Batches of rows made for one schema, applied while another task prepares the entity with a new "
        + "schema and back, are stored in the layout current when each is applied: no row is short of a "
        + "field or has a value in the wrong field."
    ) { context in
      let store = try await context.store()
      let (v1, v2) = (try raceV1(), try raceV2())
      try await store.prepare(schemas: [v1])
      let rounds = 60
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for round in 0..<rounds {
            let first = Int64(round * 4)
            // Single rows, an upsert and an update, all made for the first schema.
            try await store.apply(
              ChangeSet(
                [
                  .insert(entity: "Race", row: Row([.int(first + 1), .int(first + 1)])),
                  .upsert(entity: "Race", row: Row([.int(first + 2), .int(first + 2)])),
                  .update(entity: "Race", row: Row([.int(first + 1), .int(first + 1)])),
                ], layouts: ["Race": v1]))
            // A bulk insert of two rows through the backend's streaming path.
            try await store.backend.insert(into: v1, count: 2) { position in
              let id = first + 3 + Int64(position)
              return Row([.int(id), .int(id)])
            }
            await Task.yield()
          }
        }
        group.addTask {
          for round in 0..<rounds {
            try await store.backend.prepare([round.isMultiple(of: 2) ? v2 : v1])
            await Task.yield()
          }
        }
        try await group.waitForAll()
      }
      try await store.prepare(schemas: [v2])
      let rows = try await store.fetchRows(Query(entity: "Race", sort: [Sort("id")]))
      let expected = (1...Int64(rounds * 4)).map { Row([.int($0), .int(7), .int($0)]) }
      try expectEqual(rows.count, expected.count, "rows stored")
      for (row, wanted) in zip(rows, expected) where row != wanted {
        throw CheckFailure(
          "row \(show(row)) should be \(show(wanted)): every row reads with b = 7 (its default) and a = its id"
        )
      }
    },
    ConformanceCheck(
      "schema.typed-writers-racing-another-version", requires: [.schemaEvolution],
      "One task inserts values of a type while another prepares a newer version of its entity on the "
        + "same Store: every insert succeeds and every value reads back whole in either version."
    ) { context in
      let store = try await context.store()
      try await store.prepare([PersonV1.self])
      let rounds = 40
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for round in 0..<rounds {
            let first = Int64(round * 3)
            try await store.insert(PersonV1(id: first + 1, name: "p\(first + 1)", age: first + 1))
            try await store.insert([
              PersonV1(id: first + 2, name: "p\(first + 2)", age: first + 2),
              PersonV1(id: first + 3, name: "p\(first + 3)", age: first + 3),
            ])
            await Task.yield()
          }
        }
        group.addTask {
          for _ in 0..<rounds {
            try await store.prepare([PersonAddsDefault.self])
            await Task.yield()
          }
        }
        try await group.waitForAll()
      }
      let ids = 1...Int64(rounds * 3)
      try expectEqual(
        try await store.query(PersonAddsDefault.self).sort(\.id).fetch(),
        ids.map { PersonAddsDefault(id: $0, name: "p\($0)", age: $0, level: 7) }, "people read with a level")
      try expectEqual(
        try await store.query(PersonV1.self).sort(\.id).fetch(),
        ids.map { PersonV1(id: $0, name: "p\($0)", age: $0) }, "people read in the first version")
    },
    ConformanceCheck(
      "schema.typed-readers-racing-another-version", requires: [.schemaEvolution],
      "Typed reads (fetch, get, first) while another handle prepares the entity with a newer version and "
        + "back return every value whole, in the version the reader asked for."
    ) { context in
      let people = (1...Int64(12)).map { PersonV1(id: $0, name: "p\($0)", age: $0) }
      let store = try await context.store(with: people)
      let older = try EntitySchema(for: PersonV1.self)
      // A field before the others, so a row of this layout read as the first version would be
      // off by one.
      let newer = try EntitySchema(
        name: older.name,
        fields: [older.fields[0], Field("level", .int, default: .int(7))] + older.fields.dropFirst(),
        idField: older.idField.name)
      let rounds = 40
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask {
          for round in 0..<rounds {
            // Straight to the backend, as another Store on the same backend would.
            try await store.backend.prepare([round.isMultiple(of: 2) ? newer : older])
            await Task.yield()
          }
        }
        group.addTask {
          for _ in 0..<rounds {
            try expectEqual(
              try await store.query(PersonV1.self).sort(\.id).fetch(), people,
              "people read")
            try expectEqual(try await store.get(PersonV1.self, id: 5), people[4], "person 5")
            try expectEqual(
              try await store.get(PersonV1.self, ids: [7, 2]), [people[6], people[1]], "people 7, 2")
            await Task.yield()
          }
        }
        try await group.waitForAll()
      }
    },
  ]
}
