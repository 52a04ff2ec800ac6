@_spi(Backend) import Coffer
import CofferChildProcess
import Foundation
import Logging

/// The `Evolving` entity as the writing process declares it: a group, and a code with a plain
/// index.
private func evolvingV1() throws -> EntitySchema {
  try EntitySchema(
    name: "Evolving", fields: [Field("id", .int), Field("group", .int), Field("code", .string)],
    idField: "id", indexes: [.on("code")])
}

/// The `Evolving` entity as another process prepares it: a field with a default put before the
/// others (so rows are laid out anew), indexes on the group and the new field, and the code's
/// plain index replaced by a unique one.
private func evolvingV2() throws -> EntitySchema {
  try EntitySchema(
    name: "Evolving",
    fields: [
      Field("id", .int), Field("level", .int, default: .int(7)), Field("group", .int), Field("code", .string),
    ],
    idField: "id", indexes: [.on("group"), .on("level"), .unique("code")])
}

private func evolving(_ id: Int64) -> Row { Row([.int(id), .int(id % 3), .string("c\(id)")]) }

extension ConformanceSuite {
  /// The child side of `multiprocess.schema-evolution-beside-writer`: prepares `Evolving` with
  /// the second schema and the first in turn, `count` times, ending with the second.
  static func runEvolvingChild(
    url: String, registry: BackendRegistry, count: Int, logger: Logger? = nil
  ) async throws {
    let backend = try await registry.open(url, logger: logger)
    let (v1, v2) = (try evolvingV1(), try evolvingV2())
    for round in 0..<count {
      _ = try await backend.prepare([(count - round).isMultiple(of: 2) ? v1 : v2])
    }
    try await backend.close()
  }

  static let schemaProcessChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "multiprocess.schema-evolution-beside-writer", requires: [.multiProcess, .schemaEvolution],
      "A process that prepared an entity keeps writing and reading it correctly after another process "
        + "prepares it with a new field, new indexes (one unique) and one index dropped, and while that "
        + "process prepares it back and forth: every index holds every row, the new unique index is "
        + "enforced, and every read is right."
    ) { context in
      let child = try childProgram(of: context)
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-shared")
      let log = context.directory + "/child.log"
      let writer = Store(backend: try await context.target.open(url))
      do {
        let v1 = try evolvingV1()
        try await writer.prepare(schemas: [v1])
        try await writer.apply(ChangeSet((1...10).map { .insert(entity: "Evolving", row: evolving($0)) }))
        // The other process prepares the new schema once, and ends.
        try await waitForChild(try startChild(child, [url.description, "evolve", "1"], log: log), log: log)
        var expected = Dictionary(uniqueKeysWithValues: (1...10).map { (Int64($0), evolving($0)) })
        try await writer.apply(ChangeSet((11...20).map { .insert(entity: "Evolving", row: evolving($0)) }))
        for id in Int64(11)...20 { expected[id] = evolving(id) }
        let moved = Row([.int(2), .int(5), .string("c2")])
        try await writer.apply(
          ChangeSet([
            .update(entity: "Evolving", row: moved), .delete(entity: "Evolving", id: .int(3)),
            .upsert(entity: "Evolving", row: evolving(21)),
          ]))
        (expected[2], expected[3], expected[21]) = (moved, nil, evolving(21))
        let clash = try await expectThrows(.uniqueViolation, "a code the other process made unique, repeated")
        {
          try await writer.apply(
            ChangeSet([.insert(entity: "Evolving", row: Row([.int(22), .int(0), .string("c1")]))]))
        }
        // (Its field is not pinned: this process's schema does not declare the unique index.)
        try expectEqual(clash.entity, "Evolving", "the entity the unique violation names")
        try await expectReads(
          writer, expected, "in the writing process after the other prepared a new schema")
        try await expectIndexesWhole(url, context: context, expected, "after the other process prepared once")

        // The other process prepares back and forth while this one writes.
        let process = try startChild(child, [url.description, "evolve", "41"], log: log)
        do {
          for id in Int64(100)..<160 {
            try await writer.apply(ChangeSet([.insert(entity: "Evolving", row: evolving(id))]))
            expected[id] = evolving(id)
          }
          try await waitForChild(process, log: log)
        } catch {
          process.kill()
          _ = await process.waitUntilExit()
          throw error
        }
        try await writer.apply(ChangeSet((160..<170).map { .insert(entity: "Evolving", row: evolving($0)) }))
        for id in Int64(160)..<170 { expected[id] = evolving(id) }
        try await expectReads(
          writer, expected, "in the writing process after the other prepared back and forth")
        try await expectIndexesWhole(
          url, context: context, expected, "after the other process prepared back and forth")
        try await writer.close()
        await context.target.removeScratch(url)
      } catch {
        try? await writer.close()
        await context.target.removeScratch(url)
        throw error
      }
    }
  ]

  /// Checks what the writing process reads in its own schema: every row, and lookups and sorts on
  /// its indexed code and its group.
  private static func expectReads(_ store: Store, _ expected: [Int64: Row], _ when: String) async throws {
    let rows = expected.keys.sorted().compactMap { expected[$0] }
    try expectEqual(try await store.fetchRows(Query(entity: "Evolving")), rows, "every row \(when)")
    for id in [Int64(1), 5, 2, 3, 21] {
      try expectEqual(
        try await store.fetchRows(
          Query(entity: "Evolving", filter: .compare(field: "code", op: .equal, value: .string("c\(id)")))),
        expected[id].map { [$0] } ?? [], "the row with code c\(id) \(when)")
    }
    try expectEqual(
      try await store.fetchRows(Query(entity: "Evolving", sort: [Sort("code")])),
      rows.sorted { ValueOrder.compare($0[2], $1[2]) < 0 }, "rows sorted by code \(when)")
    for group in Int64(0)...5 {
      try expectEqual(
        try await store.fetchRows(
          Query(entity: "Evolving", filter: .compare(field: "group", op: .equal, value: .int(group)))),
        rows.filter { $0[1] == .int(group) }, "rows of group \(group) \(when)")
    }
  }

  /// Opens the store again (new handles, as a freshly started process has) and checks that each
  /// index of the second schema finds every row it should.
  private static func expectIndexesWhole(
    _ url: StoreURL, context: CheckContext, _ expected: [Int64: Row], _ when: String
  ) async throws {
    let reader = Store(backend: try await context.target.open(url))
    do {
      try await reader.prepare(schemas: [try evolvingV2()])
      let rows = expected.keys.sorted().compactMap { expected[$0] }.map { row in
        Row([row[0], .int(7), row[1], row[2]])
      }
      try expectEqual(try await reader.fetchRows(Query(entity: "Evolving")), rows, "every row \(when)")
      try expectEqual(
        try await reader.fetchRows(
          Query(entity: "Evolving", filter: .compare(field: "level", op: .equal, value: .int(7)))),
        rows, "rows with the new field's default, found by its index, \(when)")
      for group in Int64(0)...5 {
        try expectEqual(
          try await reader.fetchRows(
            Query(entity: "Evolving", filter: .compare(field: "group", op: .equal, value: .int(group)))),
          rows.filter { $0[2] == .int(group) }, "rows of group \(group), found by its new index, \(when)")
      }
      try expectEqual(
        try await reader.fetchRows(Query(entity: "Evolving", sort: [Sort("group"), Sort("id")])),
        rows.sorted { (ValueOrder.compare($0[2], $1[2]), ValueOrder.compare($0[0], $1[0])) < (0, 0) },
        "rows sorted by group \(when)")
      for id in [Int64(1), 7, 21, 150, 169] {
        try expectEqual(
          try await reader.fetchRows(
            Query(entity: "Evolving", filter: .compare(field: "code", op: .equal, value: .string("c\(id)")))),
          rows.filter { $0[3] == .string("c\(id)") }, "the row with code c\(id), by the unique index, \(when)"
        )
      }
      try await reader.close()
    } catch {
      try? await reader.close()
      throw error
    }
  }
}
