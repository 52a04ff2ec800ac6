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
  static let person = try! EntitySchema(
    name: "Person",
    fields: [Field("id", .int), Field("name", .string), Field("email", .string, isOptional: true)],
    idField: "id", indexes: [.on("name"), .unique("email")])

  static let tag = try! EntitySchema(
    name: "Tag", fields: [Field("id", .string), Field("label", .string)], idField: "id")

  func person(_ id: Int64) -> Row {
    Row([.int(id), .string("name \(id)"), .string("p\(id)@example.com")])
  }

  /// Runs `body` with a scratch store holding `Person` rows 1...count and an empty `Tag`.
  func withStore(
    people count: Int = 3, _ body: (PostgresScratch, PostgresBackend) async throws -> Void
  ) async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      let backend = try #require(store.backend as? PostgresBackend)
      try await backend.prepare([Self.person, Self.tag])
      var start = 1
      while start <= count {
        var changes = ChangeSet()
        for id in start...min(count, start + 999) { changes.insert(person(Int64(id)), into: "Person") }
        try await backend.apply(changes)
        start += 1000
      }
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

  @Test func declaresMigrationsAndListsSchemasWithThisTransactionsChanges() async throws {
    try await withStore { _, backend in
      #expect(backend.name.hasPrefix("postgres"))
      let apple = try EntitySchema(name: "Apple", fields: [Field("id", .int)], idField: "id")
      let names = try await backend.editSchema { editor in
        let before = try editor.schemas().map(\.name)
        try editor.create(apple)
        try editor.drop("Tag")
        return [before, try editor.schemas().map(\.name)]
      }
      #expect(names == [["Person", "Tag"], ["Apple", "Person"]])
      #expect(try await backend.editSchema { try $0.schemas() } == [apple, Self.person])
    }
  }

  @Test func aStoreNeverPreparedHasNoEntitiesAndAnEmptyLog() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      let backend = try #require(store.backend as? PostgresBackend)
      let (schemas, log) = try await backend.editSchema { (try $0.schemas(), try $0.migrations()) }
      #expect(schemas.isEmpty)
      #expect(log.isEmpty)
      _ = await expectCofferError(.unknownEntity) { try await backend.editSchema { try $0.drop("Person") } }
      try await backend.editSchema { try $0.create(Self.tag) }
      #expect(try await backend.prepare([Self.tag]) == [Self.tag])
      try await store.close()
    }
  }

  @Test func scanVisitsEveryRowAndCanInsertAndScanMeanwhile() async throws {
    try await withStore(people: 2_500) { _, backend in
      let copy = try EntitySchema(name: "Copy", fields: Self.person.fields, idField: "id")
      let (count, inner) = try await backend.editSchema { editor in
        try editor.create(copy)
        var count = 0
        var inner = 0
        try editor.scan("Person") { fields in
          try editor.insert(try Row(fields), into: "Copy")
          if count == 0 { try editor.scan("Tag") { _ in inner += 1 } }
          count += 1
        }
        return (count, inner)
      }
      #expect(count == 2_500)
      #expect(inner == 0)
      #expect(Set(try await rows(backend, "Copy")) == Set((1...2_500).map { person(Int64($0)) }))
      _ = await expectCofferError(.unknownEntity) {
        try await backend.editSchema { try $0.scan("Nobody") { _ in } }
      }
    }
  }

  @Test func createMakesAnEmptyEntityWithItsIndexes() async throws {
    try await withStore { scratch, backend in
      let account = try EntitySchema(
        name: "Account", fields: [Field("id", .uuid), Field("login", .string)], idField: "id",
        indexes: [.unique("login")])
      try await backend.editSchema { try $0.create(account) }
      #expect(try await rows(backend, "Account").isEmpty)
      #expect(try await backend.prepare([account]).contains(account))
      #expect(
        try await scratch.server.psql(
          "SELECT indexname FROM pg_indexes WHERE schemaname = '\(scratch.schema)' AND tablename = 'Account' "
            + "ORDER BY indexname") == "Account#id\nAccount/unique/login")
      var changes = ChangeSet()
      changes.insert(Row([.uuid(UUID()), .string("same")]), into: "Account")
      changes.insert(Row([.uuid(UUID()), .string("same")]), into: "Account")
      _ = await expectCofferError(.uniqueViolation) { try await backend.apply(changes) }
      _ = await expectCofferError(.invalidSchema) {
        try await backend.editSchema { try $0.create(Self.person) }
      }
    }
  }

  @Test func insertFailsAsABatchInsertWouldAndNamesNoValue() async throws {
    try await withStore { _, backend in
      let duplicate = await expectCofferError(.duplicateID) {
        try await backend.editSchema { try $0.insert(person(1), into: "Person") }
      }
      #expect(duplicate?.entity == "Person")
      let secret = "p2@example.com"
      let clash = await expectCofferError(.uniqueViolation) {
        try await backend.editSchema {
          try $0.insert(Row([.int(9), .string("x"), .string(secret)]), into: "Person")
        }
      }
      #expect(clash?.field == "email")
      #expect(clash?.reveals(secret) == false)
      #expect(clash?.reveals("name 2") == false)
      _ = await expectCofferError(.unknownEntity) {
        try await backend.editSchema { try $0.insert(person(1), into: "Nobody") }
      }
      let count = try await rows(backend, "Person").count
      #expect(count == 3)
    }
  }

  @Test func aRefusedInsertLeavesTheStepUsable() async throws {
    try await withStore { _, backend in
      let refused = try await backend.editSchema { editor in
        var refused = 0
        for id in Int64(2)...5 {
          do {
            try editor.insert(person(id), into: "Person")
          } catch let error as CofferError where error.code == .duplicateID {
            refused += 1
          }
        }
        return refused
      }
      #expect(refused == 2)
      #expect(try await rows(backend, "Person") == (1...5).map { person(Int64($0)) })
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
      let user = try EntitySchema(
        name: "User",
        fields: [Field("id", .int), Field("fullName", .string), Field("email", .string, isOptional: true)],
        idField: "id", indexes: [.on("fullName"), .unique("email")])
      try await backend.editSchema { try $0.relabel("Person", as: user) }
      #expect(try await rows(backend, "User") == (1...100).map { person(Int64($0)) })
      _ = await expectCofferError(.unknownEntity) { _ = try await rows(backend, "Person") }
      #expect(try await backend.editSchema { try $0.schemas() } == [Self.tag, user])
      #expect(
        try await scratch.server.psql("SELECT ctid, * FROM \(scratch.table("User")) ORDER BY id") == before)
      #expect(
        try await scratch.server.psql(
          "SELECT indexname FROM pg_indexes WHERE schemaname = '\(scratch.schema)' AND tablename = 'User' "
            + "ORDER BY indexname") == "User#id\nUser/index/fullName\nUser/unique/email")
      var clash = ChangeSet()
      clash.insert(Row([.int(101), .string("n"), .string("p1@example.com")]), into: "User")
      _ = await expectCofferError(.uniqueViolation) { try await backend.apply(clash) }
      #expect(try await backend.checkStorage().isEmpty)
    }
  }

  @Test func relabelSwapsFieldNames() async throws {
    try await withStore { scratch, backend in
      let pair = try EntitySchema(
        name: "Pair", fields: [Field("id", .int), Field("a", .string), Field("b", .string)], idField: "id",
        indexes: [.on("a"), .on("b")])
      try await backend.prepare([pair])
      var changes = ChangeSet()
      changes.insert(Row([.int(1), .string("first"), .string("second")]), into: "Pair")
      try await backend.apply(changes)
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
      let v1 = try EntitySchema(
        name: "Note",
        fields: [Field("id", .int), Field("old", .string, isOptional: true), Field("text", .string)],
        idField: "id")
      try await backend.prepare([v1])
      var changes = ChangeSet()
      changes.insert(Row([.int(1), .string("kept"), .string("hello")]), into: "Note")
      try await backend.apply(changes)
      let v2 = try EntitySchema(
        name: "Note", fields: [Field("id", .int), Field("text", .string)], idField: "id")
      try await backend.prepare([v2])
      let v3 = try EntitySchema(
        name: "Note", fields: [Field("id", .int), Field("old", .string)], idField: "id")
      try await backend.editSchema { try $0.relabel("Note", as: v3) }
      #expect(try await rows(backend, "Note") == [Row([.int(1), .string("hello")])])
      #expect(
        try await scratch.server.psql("SELECT old, old_2 FROM \(scratch.table("Note"))") == "kept|hello")
      #expect(try await backend.checkStorage().isEmpty)
    }
  }

  @Test func relabelRefusesAnythingButNames() async throws {
    try await withStore { _, backend in
      let changedKind = try EntitySchema(
        name: "Person",
        fields: [Field("id", .int), Field("name", .int), Field("email", .string, isOptional: true)],
        idField: "id", indexes: [.on("name"), .unique("email")])
      let error = await expectCofferError(.invalidSchema) {
        try await backend.editSchema { try $0.relabel("Person", as: changedKind) }
      }
      #expect(error?.field == "name")
      let ontoTag = try EntitySchema(
        name: "Tag", fields: Self.person.fields, idField: "id", indexes: Self.person.indexes)
      _ = await expectCofferError(.invalidSchema) {
        try await backend.editSchema { try $0.relabel("Person", as: ontoTag) }
      }
      #expect(try await rows(backend, "Person").count == 3)
    }
  }

  @Test func aThrownBodyChangesNothing() async throws {
    struct Stop: Error {}
    try await withStore { _, backend in
      let user = try EntitySchema(
        name: "User", fields: Self.person.fields, idField: "id", indexes: Self.person.indexes)
      do {
        try await backend.editSchema { editor in
          try editor.insert(person(4), into: "Person")
          try editor.relabel("Person", as: user)
          try editor.drop("Tag")
          try editor.create(EntitySchema(name: "Tag", fields: [Field("id", .int)], idField: "id"))
          try editor.record(MigrationRecord(name: "one", position: 0, appliedAt: Date(), rowsTouched: 4))
          throw Stop()
        }
        Issue.record("The body's error was not rethrown")
      } catch is Stop {}
      #expect(try await rows(backend, "Person") == (1...3).map { person(Int64($0)) })
      var changes = ChangeSet()
      changes.insert(Row([.string("t"), .string("label")]), into: "Tag")
      try await backend.apply(changes)
      let (schemas, log) = try await backend.editSchema { (try $0.schemas(), try $0.migrations()) }
      #expect(schemas == [Self.person, Self.tag])
      #expect(log.isEmpty)
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

  @Test func theLogRecordsStepsInOrderAndRefusesATakenPosition() async throws {
    try await withStore { scratch, backend in
      #expect(try await backend.editSchema { try $0.migrations() }.isEmpty)
      let first = MigrationRecord(
        name: "a", position: 0, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 3)
      let second = MigrationRecord(
        name: "b", position: 1, appliedAt: Date(timeIntervalSince1970: 2), rowsTouched: 0)
      try await backend.editSchema { try $0.record(first) }
      try await backend.editSchema { try $0.record(second) }
      #expect(try await backend.editSchema { try $0.migrations() } == [first, second])
      _ = await expectCofferError(.conflict) { try await backend.editSchema { try $0.record(first) } }
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

  @Test func statementsAreNotReusedForATableRecreatedWithOtherKinds() async throws {
    try await withStore { _, backend in
      var changes = ChangeSet()
      changes.insert(Row([.string("t1"), .string("one")]), into: "Tag")
      try await backend.apply(changes)
      // Prepares the statements of the old table on the pool's connections.
      for _ in 0..<4 {
        #expect(try await backend.fetch(Query(entity: "Tag")).count == 1)
        #expect(
          try await backend.fetch(
            Query(entity: "Tag", filter: .compare(field: "id", op: .equal, value: .string("t1")))
          ).count == 1)
      }
      let tag2 = try EntitySchema(
        name: "Tag", fields: [Field("id", .string), Field("label", .int)], idField: "id")
      try await backend.editSchema { editor in
        var old: [Row] = []
        try editor.scan("Tag") { old.append(try Row($0)) }
        try editor.drop("Tag")
        try editor.create(tag2)
        for row in old { try editor.insert(Row([row[0], .int(5)]), into: "Tag") }
      }
      for _ in 0..<4 {
        #expect(try await backend.fetch(Query(entity: "Tag")) == [Row([.string("t1"), .int(5)])])
        #expect(
          try await backend.fetch(
            Query(entity: "Tag", filter: .compare(field: "id", op: .equal, value: .string("t1")))
          ) == [Row([.string("t1"), .int(5)])])
      }
      var more = ChangeSet()
      more.insert(Row([.string("t2"), .int(6)]), into: "Tag")
      more.update(Row([.string("t1"), .int(7)]), in: "Tag")
      try await backend.apply(more)
      #expect(
        try await backend.fetch(Query(entity: "Tag")) == [
          Row([.string("t1"), .int(7)]), Row([.string("t2"), .int(6)]),
        ])
      #expect(try await backend.prepare([tag2]).contains(tag2))
    }
  }

  @Test func theEditorRefusesWorkAfterItsBody() async throws {
    final class Keeper: @unchecked Sendable {
      // `@unchecked Sendable`: written once inside the body and read after it returned.
      var editor: (any SchemaEditor)?
    }
    try await withStore { _, backend in
      let keeper = Keeper()
      try await backend.editSchema { keeper.editor = $0 }
      do {
        _ = try keeper.editor?.schemas()
        Issue.record("The editor worked after its body")
      } catch let error as CofferError {
        #expect(error.code == .closed)
      }
    }
  }
}
