@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferPostgres

/// What a transaction that reads rows by id and writes them back sends on PostgreSQL: one
/// statement, which the server stops planning once it has run a few times on a connection.
@Suite struct PostgresWriteBackTests {
  static let schema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Account",
        fields: [
          Field("id", .int), Field("balance", .int), Field("owner", .string, isOptional: true),
          Field("rate", .double),
        ],
        idField: "id")
    } catch {
      preconditionFailure("the test's schema is well formed: \(error)")
    }
  }()

  static let accounts: [Int64] = Array(1...10)

  func row(_ id: Int64, balance: Int64) -> Row {
    Row([.int(id), .int(balance), id.isMultiple(of: 2) ? .null : .string("owner \(id)"), .double(0.5)])
  }

  /// Moves one unit from each of `ids` but the last to the last, as a transaction commits it:
  /// the rows read by id, on the condition that they are unchanged, each updated.
  func transfer(_ ids: [Int64], balances: inout [Int64: Int64], in store: Store) async throws -> ChangeSummary
  {
    let read = ids.sorted().map { row($0, balance: balances[$0] ?? 0) }
    var operations: [ChangeSet.Operation] = []
    for (position, id) in ids.enumerated() {
      let change: Int64 = position == ids.count - 1 ? Int64(ids.count - 1) : -1
      balances[id, default: 0] += change
      operations.append(.update(entity: "Account", row: row(id, balance: balances[id] ?? 0)))
    }
    var changes = ChangeSet(operations, layouts: ["Account": Self.schema])
    changes.preconditions = [
      ChangeSet.Precondition(Query(lookingUp: ids.sorted().map { .int($0) }, in: Self.schema), .rows(read))
    ]
    return try await store.backend.apply(changes)
  }

  @Test func aWriteBackOfAFewRowsIsOneStatement() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await store.prepare(schemas: [Self.schema])
      var balances: [Int64: Int64] = [:]
      var setup = ChangeSet()
      for id in Self.accounts {
        balances[id] = 100
        setup.insert(row(id, balance: 100), into: "Account")
      }
      try await store.apply(setup)
      try await scratch.countUpdateStatements(on: "Account")

      // Enough transfers that a connection of the pool runs the statement past its fifth time.
      var expected = 0
      for round in 0..<24 {
        let first = Int64(round % 10) + 1
        let ids = [first, first % 10 + 1]
        #expect(try await transfer(ids, balances: &balances, in: store) == ChangeSummary(updated: 2))
        expected += 1
      }
      for count in [1, 3, PostgresTable.fewRows] {
        let ids = Array(Self.accounts.prefix(count))
        #expect(try await transfer(ids, balances: &balances, in: store) == ChangeSummary(updated: count))
        expected += 1
      }
      #expect(
        try await scratch.updateStatements() == "\(expected)",
        "statements that updated rows")
      let stored = try await server.psql("SELECT id, balance FROM \(scratch.table("Account")) ORDER BY id")
      #expect(stored == Self.accounts.map { "\($0)|\(balances[$0] ?? 0)" }.joined(separator: "\n"))

      // A row changed since it was read: nothing is written, and the batch is a conflict.
      var stale = balances
      stale[1, default: 0] += 5
      await #expect(throws: CofferError.self) { _ = try await transfer([1, 2], balances: &stale, in: store) }
      #expect(
        try await server.psql("SELECT id, balance FROM \(scratch.table("Account")) ORDER BY id") == stored)
      try await store.close()
    }
  }

  @Test func theServerKeepsAGenericPlanForAWriteBackOfAFewRows() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await store.prepare(schemas: [Self.schema])
      var setup = ChangeSet()
      for id in Self.accounts { setup.insert(row(id, balance: 100), into: "Account") }
      try await store.apply(setup)
      let backend = try #require(store.backend as? PostgresBackend)
      let table = try #require(backend.tables.withLock { $0["Account"] })
      #expect(table.updateFewIfUnchangedSQL.count == PostgresTable.fewRows)
      for (index, sql) in table.updateFewIfUnchangedSQL.enumerated() {
        let count = index + 1
        // Each row read as stored, then written back unchanged.
        let values = Self.accounts.prefix(count).map { id in
          "\(id), 100, \(id.isMultiple(of: 2) ? "NULL" : "'owner \(id)'"), 0.5"
        }
        let parameters = (values + values).joined(separator: ", ")
        let runs = Array(repeating: "EXECUTE \"write_back\"(\(parameters));", count: 8).joined(
          separator: "\n")
        let output = try await server.psql(
          """
          BEGIN;
          PREPARE "write_back" AS \(sql);
          \(runs)
          SELECT generic_plans, custom_plans FROM pg_prepared_statements WHERE name = 'write_back';
          ROLLBACK;
          """)
        // psql prints each statement's rows (the ids updated), then the plans' numbers.
        let plans = output.split(separator: "\n").last.map(String.init) ?? ""
        #expect(plans == "3|5", "generic and custom plans of the \(count)-row write-back")
        #expect(
          output.split(separator: "\n").count == 8 * count + 1, "rows the \(count)-row write-back updated")
      }
      try await store.close()
    }
  }
}
