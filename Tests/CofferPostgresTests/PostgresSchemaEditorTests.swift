@_spi(Backend) import Coffer
@_spi(Backend) import CofferPostgres
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The PostgreSQL backend's schema editor: each primitive a migration step is built from, the
/// transaction and lock around them, and what the backend's caches make of the changes. Each
/// test works in a schema of its own on the test server, and skips without one.
@Suite struct PostgresSchemaEditorTests {
  static let person = SchemaEditorCheck.person
  static let tag = SchemaEditorCheck.tag

  func person(_ id: Int64) -> Row { SchemaEditorCheck.person(id) }

  /// Runs `body` with a scratch store holding `Person` rows 1...count and an empty `Tag`.
  func withStore(
    people count: Int = 3, _ body: (PostgresScratch, PostgresBackend) async throws -> Void
  ) async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      let backend = try #require(store.backend as? PostgresBackend)
      try await SchemaEditorCheck.fill(backend, people: count)
      do {
        try await body(scratch, backend)
      } catch {
        try? await store.close()
        throw error
      }
      try await store.close()
    }
  }

  func rows(_ backend: any StorageBackend, _ entity: String) async throws -> [Row] {
    try await backend.fetch(Query(entity: entity))
  }

  @Test(arguments: SchemaEditorCheck.allCases)
  func behavesAsEverySQLBackendsEditorDoes(_ check: SchemaEditorCheck) async throws {
    try await withStore(people: check.people) { _, backend in try await check.run(on: backend) }
  }

  @Test func aStoreNeverPreparedHasNoEntitiesAndAnEmptyLog() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await SchemaEditorCheck.checkAStoreNeverPrepared(try #require(store.backend as? PostgresBackend))
      try await store.close()
    }
  }

  @Test func createMakesTheTableAndItsIndexes() async throws {
    try await withStore { scratch, backend in
      let account = try EntitySchema(
        name: "Account", fields: [Field("id", .uuid), Field("login", .string)], idField: "id",
        indexes: [.unique("login")])
      try await backend.editSchema { try $0.create(account) }
      #expect(
        try await scratch.server.psql(
          "SELECT indexname FROM pg_indexes WHERE schemaname = '\(scratch.schema)' AND tablename = 'Account' "
            + "ORDER BY indexname") == "Account#id\nAccount/unique/login")
    }
  }

  @Test func dropRemovesTheTableItsIndexesAndItsRecord() async throws {
    try await withStore { scratch, backend in
      try await backend.editSchema { try $0.drop("Person") }
      #expect(try await backend.editSchema { try $0.schemas().map(\.name) } == ["Tag"])
      _ = await expectCofferError(.unknownEntity) { _ = try await rows(backend, "Person") }
      _ = await expectCofferError(.unknownEntity) { try await backend.editSchema { try $0.drop("Person") } }
      let left = try await scratch.server.psql(
        "SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
          + "WHERE n.nspname = '\(scratch.schema)' AND c.relname LIKE 'Person%'")
      #expect(left == "0")
      #expect(
        try await scratch.server.psql(
          "SELECT count(*) FROM \(scratch.table("coffer_catalog")) WHERE entity = 'Person'")
          == "0")
    }
  }

  @Test func relabelRenamesInTheCatalogsKeepingEveryRowWhereItIs() async throws {
    try await withStore(people: 100) { scratch, backend in
      let before = try await scratch.server.psql("SELECT ctid, * FROM \(scratch.table("Person")) ORDER BY id")
      try await SchemaEditorCheck.relabelPersonAsUser(backend, people: 100)
      #expect(
        try await scratch.server.psql("SELECT ctid, * FROM \(scratch.table("User")) ORDER BY id") == before)
      #expect(
        try await scratch.server.psql(
          "SELECT indexname FROM pg_indexes WHERE schemaname = '\(scratch.schema)' AND tablename = 'User' "
            + "ORDER BY indexname") == "User#id\nUser/index/fullName\nUser/unique/email")
      #expect(try await backend.checkStorage().isEmpty)
    }
  }

  @Test func relabelSwapsFieldNames() async throws {
    try await withStore { scratch, backend in
      try await SchemaEditorCheck.preparePair(backend, named: "Pair", indexes: [.on("a"), .on("b")])
      let swapped = try EntitySchema(
        name: "Pair", fields: [Field("id", .int), Field("b", .string), Field("a", .string)], idField: "id",
        indexes: [.on("b"), .on("a")])
      try await backend.editSchema { try $0.relabel("Pair", as: swapped) }
      #expect(try await rows(backend, "Pair") == [Row([.int(1), .string("first"), .string("second")])])
      #expect(try await scratch.server.psql("SELECT b FROM \(scratch.table("Pair"))") == "first")
      let found = try await backend.fetch(
        Query(entity: "Pair", filter: .compare(field: "b", op: .equal, value: .string("first"))))
      #expect(found.count == 1)
      #expect(try await backend.checkStorage().isEmpty)
    }
  }

  @Test func relabelKeepsTheColumnOfAFieldNoLongerDeclared() async throws {
    try await withStore { scratch, backend in
      try await SchemaEditorCheck.relabelOntoAFieldNoLongerDeclared(backend)
      #expect(
        try await scratch.server.psql("SELECT old, old_2 FROM \(scratch.table("Note"))") == "kept|hello")
      #expect(try await backend.checkStorage().isEmpty)
    }
  }

  @Test func aReopenedStoreSeesTheCommittedChanges() async throws {
    try await withStore { scratch, backend in
      let user = try EntitySchema(
        name: "User", fields: Self.person.fields, idField: "id", indexes: Self.person.indexes)
      let step = MigrationRecord(
        name: "rename", position: 0, appliedAt: Date(timeIntervalSince1970: 1_700_000_000.123), rowsTouched: 0
      )
      try await backend.editSchema { editor in
        try editor.relabel("Person", as: user)
        try editor.drop("Tag")
        try editor.record(step)
      }
      let reopened = try await scratch.open()
      #expect(try await reopened.backend.prepare([user]) == [user])
      #expect(try await rows(reopened.backend, "User") == (1...3).map { person(Int64($0)) })
      #expect(
        try await #require(reopened.backend as? any SchemaEditing).editSchema { try $0.migrations() } == [
          step
        ])
      #expect(try await #require(reopened.backend as? any StorageInspecting).checkStorage().isEmpty)
      try await reopened.close()
    }
  }

  @Test func theLogIsATableOfPositions() async throws {
    try await withStore { scratch, backend in
      for position in 0...1 {
        let step = MigrationRecord(
          name: "s\(position)", position: position, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 0)
        try await backend.editSchema { try $0.record(step) }
      }
      #expect(
        try await scratch.server.psql("SELECT position FROM \(scratch.table("coffer_migrations"))") == "0\n1")
    }
  }

  @Test func editorsOfTwoHandlesTakeTurns() async throws {
    try await withStore { scratch, backend in
      let other = try await scratch.open()
      @Sendable func step(_ name: String, _ backend: any SchemaEditing) async throws -> Int {
        try await backend.editSchema { editor in
          let position = try editor.migrations().count
          // Long enough for the other editor to start meanwhile.
          Thread.sleep(forTimeInterval: 0.2)
          try editor.record(
            MigrationRecord(
              name: name, position: position, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 0))
          return position
        }
      }
      async let one = step("one", backend)
      let otherBackend = try #require(other.backend as? any SchemaEditing)
      async let two = step("two", otherBackend)
      let positions = try await [one, two]
      #expect(positions.sorted() == [0, 1])
      #expect(try await backend.editSchema { try $0.migrations() }.map(\.position) == [0, 1])
      try await other.close()
    }
  }
}
