@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

/// What the change feed adds on PostgreSQL: nothing while it is off; while it is on, one statement
/// per batch, with the batch's own statements as they were.
@Suite struct PostgresChangeFeedTests {
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

  /// Inserts 2,000 rows and updates them all in one batch; returns the statements that updated rows.
  func insertAndUpdate(_ store: Store, _ scratch: PostgresScratch) async throws -> String {
    var insert = ChangeSet()
    for id in 1...2_000 { insert.insert(row(id, "old\(id)@x", 0), into: "Member") }
    try await store.apply(insert)
    try await scratch.countUpdateStatements(on: "Member")
    var updates = ChangeSet()
    for id in 1...2_000 { updates.update(row(id, "new\(id)@x", 1), in: "Member") }
    #expect(try await store.apply(updates) == ChangeSummary(updated: 2_000))
    return try await scratch.updateStatements()
  }

  @Test func aStoreWithoutTheFeedHasNoFeedTableNoGuardAndTheSameStatements() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await store.prepare(schemas: [Self.schema])
      #expect(try await insertAndUpdate(store, scratch) == "1", "statements that updated rows")
      let tables = try await server.psql(
        "SELECT count(*) FROM pg_tables WHERE schemaname = '\(scratch.schema)' AND tablename LIKE 'coffer_change%'"
      )
      #expect(tables == "0", "feed tables in a store without the feed")
      let triggers = try await server.psql(
        "SELECT count(*) FROM pg_trigger WHERE tgrelid = '\(scratch.table("Member"))'::regclass "
          + "AND tgname = 'coffer_feed_guard'")
      #expect(triggers == "0", "feed guards on a table of a store without the feed")
      try await store.close()
    }
  }

  @Test func aRunOfUpdatesIsStillOneStatementAndOneBatchWithTheFeedOn() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open(options: ["changes": "on"])
      try await store.prepare(schemas: [Self.schema])
      #expect(try await insertAndUpdate(store, scratch) == "1", "statements that updated rows")
      var batches: [CommittedBatch] = []
      for try await batch in store.changes() { batches.append(batch) }
      #expect(
        batches.map(\.changes.count) == [2_000, 2_000], "rows of the insert's and the update's batches")
      #expect(
        batches.last?.changes.allSatisfy { $0.kind == .update } == true, "the update's rows are updates")
      try await store.close()
    }
  }

  @Test func aWriterThatHasNotHeardTheFeedIsOnIsRefusedByTheGuardAndRecords() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let writer = try await scratch.open()
      try await writer.prepare(schemas: [Self.schema])
      var first = ChangeSet()
      first.insert(row(1, nil, 0), into: "Member")
      try await writer.apply(first)
      let reader = try await scratch.open(options: ["changes": "on"])
      try await reader.prepare(schemas: [Self.schema])
      // A write from outside Coffer that does not say it records is refused.
      await #expect(throws: PSQLFailure.self) {
        try await server.psql("UPDATE \(scratch.table("Member")) SET n = 5")
      }
      var second = ChangeSet()
      second.update(row(1, "a@x", 1), in: "Member")
      second.insert(row(2, nil, 0), into: "Member")
      #expect(try await writer.apply(second) == ChangeSummary(inserted: 1, updated: 1))
      var batches: [CommittedBatch] = []
      for try await batch in reader.changes() { batches.append(batch) }
      #expect(batches.map { $0.changes.map(\.id) } == [[.int(1), .int(2)]], "the writer's batch, whole")
      try await writer.close()
      try await reader.close()
    }
  }
}
