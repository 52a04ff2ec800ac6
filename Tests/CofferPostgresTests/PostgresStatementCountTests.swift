@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

/// How many statements a batch sends, counted on the server by a statement-level trigger: runs of
/// updates and upserts go as one statement each, also on an entity with a unique index.
@Suite struct PostgresStatementCountTests {
  static let schema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Member",
        fields: [Field("id", .int), Field("email", .string, isOptional: true), Field("n", .int)],
        idField: "id", indexes: [.unique("email")])
    } catch {
      preconditionFailure("the test's schema is well formed: \(error)")
    }
  }()

  func row(_ id: Int, _ email: String?, _ n: Int) -> Row {
    Row([.int(Int64(id)), email.map { .string($0) } ?? .null, .int(Int64(n))])
  }

  @Test func updatesAndUpsertsOfAnEntityWithAUniqueIndexGoAsOneStatement() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await store.prepare(schemas: [Self.schema])
      var insert = ChangeSet()
      for id in 1...2_000 { insert.insert(row(id, "old\(id)@x", 0), into: "Member") }
      try await store.apply(insert)
      try await scratch.countUpdateStatements(on: "Member")

      var updates = ChangeSet()
      for id in 1...2_000 { updates.update(row(id, "new\(id)@x", 1), in: "Member") }
      #expect(try await store.apply(updates) == ChangeSummary(updated: 2_000))
      #expect(try await scratch.updateStatements() == "1", "statements that updated rows")

      var upserts = ChangeSet()
      for id in 1...2_500 {
        upserts.upsert(row(id, id.isMultiple(of: 2) ? nil : "up\(id)@x", 2), in: "Member")
      }
      #expect(try await store.apply(upserts) == ChangeSummary(inserted: 500, updated: 2_000))
      #expect(try await scratch.updateStatements() == "2", "statements that updated rows")

      // A run where a row takes the value another row of it held goes row by row, in order: the
      // run's one statement finds the clash and changes nothing (the trigger counts it all the
      // same), then one statement a row.
      var chain = ChangeSet()
      chain.update(row(1, "free@x", 3), in: "Member")
      chain.update(row(3, "up1@x", 3), in: "Member")
      #expect(try await store.apply(chain) == ChangeSummary(updated: 2))
      #expect(try await scratch.updateStatements() == "5", "UPDATE statements run")
      #expect(
        try await server.psql("SELECT email FROM \(scratch.table("Member")) WHERE id IN (1, 3) ORDER BY id")
          == "free@x\nup1@x")
      try await store.close()
    }
  }
}
