@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferSQLite

/// The SQLite backend's schema editor: each primitive a migration step is built from, the
/// transaction around them, and what the backend's caches make of the changes.
@Suite struct SQLiteSchemaEditorTests {
  static let person = try! EntitySchema(
    name: "Person",
    fields: [Field("id", .int), Field("name", .string), Field("email", .string, isOptional: true)],
    idField: "id", indexes: [.on("name"), .unique("email")])

  static let tag = try! EntitySchema(
    name: "Tag", fields: [Field("id", .string), Field("label", .string)], idField: "id")

  /// A store with `Person` rows 1...count and an empty `Tag`.
  func makeStore(_ folder: TemporaryFolder, people count: Int = 3) async throws -> SQLiteBackend {
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    try await backend.prepare([Self.person, Self.tag])
    var changes = ChangeSet()
    for id in 1...count {
      changes.insert(person(Int64(id)), into: "Person")
    }
    try await backend.apply(changes)
    return backend
  }

  func person(_ id: Int64) -> Row {
    Row([.int(id), .string("name \(id)"), .string("p\(id)@example.com")])
  }

  func rows(_ backend: SQLiteBackend, _ entity: String) async throws -> [Row] {
    try await backend.fetch(Query(entity: entity))
  }

  func sqlite(_ folder: TemporaryFolder, _ sql: String) throws -> String {
    try runTool("sqlite3", [folder.file("store.sqlite"), sql]).output
  }

  @Test func declaresMigrations() throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    #expect((backend as any StorageBackend) is any SchemaEditing)
  }

  @Test func schemasListsStoredEntitiesByNameWithThisTransactionsChanges() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let names = try await backend.editSchema { editor in
      let before = try editor.schemas().map(\.name)
      try editor.create(EntitySchema(name: "Apple", fields: [Field("id", .int)], idField: "id"))
      try editor.drop("Tag")
      return [before, try editor.schemas().map(\.name)]
    }
    #expect(names == [["Person", "Tag"], ["Apple", "Person"]])
    #expect(
      try await backend.editSchema { try $0.schemas() }
        == [Self.person, try EntitySchema(name: "Apple", fields: [Field("id", .int)], idField: "id")].sorted {
          $0.name < $1.name
        })
  }

  @Test func aStoreNeverPreparedHasNoEntitiesAndAnEmptyLog() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    let (schemas, log) = try await backend.editSchema { (try $0.schemas(), try $0.migrations()) }
    #expect(schemas.isEmpty)
    #expect(log.isEmpty)
    _ = await expectCode(.unknownEntity) { try await backend.editSchema { try $0.drop("Person") } }
    try await backend.editSchema { try $0.create(Self.tag) }
    #expect(try await backend.prepare([Self.tag]) == [Self.tag])
  }

  @Test func scanVisitsEveryRowInTheStoredSchema() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder, people: 50)
    let scanned = try await backend.editSchema { editor in
      var rows: [Row] = []
      try editor.scan("Person") { rows.append(try Row($0)) }
      return rows
    }
    #expect(Set(scanned) == Set((1...50).map { person(Int64($0)) }))
    _ = await expectCode(.unknownEntity) {
      try await backend.editSchema { try $0.scan("Nobody") { _ in } }
    }
  }

  @Test func aScanCanInsertIntoAnotherEntityAndScanAgain() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder, people: 20)
    let copy = try EntitySchema(name: "Copy", fields: Self.person.fields, idField: "id")
    let nested = try await backend.editSchema { editor in
      try editor.create(copy)
      var inner = 0
      try editor.scan("Person") { fields in
        try editor.insert(try Row(fields), into: "Copy")
        if inner == 0 { try editor.scan("Person") { _ in inner += 1 } }
      }
      return inner
    }
    #expect(nested == 20)
    #expect(Set(try await rows(backend, "Copy")) == Set((1...20).map { person(Int64($0)) }))
  }

  @Test func createMakesAnEmptyEntityWithItsIndexes() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let account = try EntitySchema(
      name: "Account", fields: [Field("id", .uuid), Field("login", .string)], idField: "id",
      indexes: [.unique("login")])
    try await backend.editSchema { try $0.create(account) }
    #expect(try await rows(backend, "Account").isEmpty)
    #expect(try await backend.prepare([account]).contains(account))
    var changes = ChangeSet()
    changes.insert(Row([.uuid(UUID()), .string("same")]), into: "Account")
    changes.insert(Row([.uuid(UUID()), .string("same")]), into: "Account")
    _ = await expectCode(.uniqueViolation) { try await backend.apply(changes) }
    _ = await expectCode(.invalidSchema) {
      try await backend.editSchema { try $0.create(Self.person) }
    }
  }

  @Test func insertFailsAsABatchInsertWould() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    _ = await expectCode(.duplicateID) {
      try await backend.editSchema { try $0.insert(person(1), into: "Person") }
    }
    let clash = Row([.int(9), .string("x"), .string("p2@example.com")])
    let error = await expectCode(.uniqueViolation) {
      try await backend.editSchema { try $0.insert(clash, into: "Person") }
    }
    #expect(error?.entity == "Person")
    _ = await expectCode(.unknownEntity) {
      try await backend.editSchema { try $0.insert(person(1), into: "Nobody") }
    }
    #expect(try await rows(backend, "Person").count == 3)
  }

  @Test func errorsNameTheFieldsButCarryNoValues() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let secret = "p2@example.com"
    let error = await expectCode(.uniqueViolation) {
      try await backend.editSchema {
        try $0.insert(Row([.int(9), .string("x"), .string(secret)]), into: "Person")
      }
    }
    #expect(error?.field == "email")
    let text = error.map { "\($0)" } ?? secret
    #expect(!text.contains(secret))
    #expect(!text.contains("name 2"))
  }

  @Test func dropRemovesTheTableItsIndexesAndItsRecord() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    try await backend.editSchema { try $0.drop("Person") }
    #expect(try await backend.editSchema { try $0.schemas().map(\.name) } == ["Tag"])
    _ = await expectCode(.unknownEntity) { _ = try await rows(backend, "Person") }
    _ = await expectCode(.unknownEntity) {
      try await backend.editSchema { try $0.drop("Person") }
    }
    if hasSQLiteTool {
      let left = try sqlite(folder, "SELECT name FROM sqlite_schema WHERE name LIKE 'Person%'")
      #expect(left.isEmpty)
    }
    try await backend.close()
    let reopened = try SQLiteBackend(path: folder.file("store.sqlite"))
    #expect(try await reopened.prepare([Self.tag]).map(\.name) == ["Tag"])
  }

  @Test func relabelRenamesInPlaceKeepingRowsAndRowids() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder, people: 100)
    let before = hasSQLiteTool ? try sqlite(folder, #"SELECT rowid, * FROM "Person" ORDER BY rowid"#) : ""
    let user = try EntitySchema(
      name: "User",
      fields: [Field("id", .int), Field("fullName", .string), Field("email", .string, isOptional: true)],
      idField: "id", indexes: [.on("fullName"), .unique("email")])
    try await backend.editSchema { try $0.relabel("Person", as: user) }
    #expect(try await rows(backend, "User") == (1...100).map { person(Int64($0)) })
    _ = await expectCode(.unknownEntity) { _ = try await rows(backend, "Person") }
    #expect(try await backend.editSchema { try $0.schemas() } == [Self.tag, user])
    if hasSQLiteTool {
      #expect(try sqlite(folder, #"SELECT rowid, * FROM "User" ORDER BY rowid"#) == before)
      // SQLite cannot rename an index: the indexes follow the table and column, under their names.
      let indexes = try sqlite(
        folder, "SELECT name, sql FROM sqlite_schema WHERE tbl_name = 'User' AND type = 'index' ORDER BY name"
      )
      #expect(
        indexes == #"Person/index/name|CREATE INDEX "Person/index/name" ON "User" ("fullName")"# + "\n"
          + #"Person/unique/email|CREATE UNIQUE INDEX "Person/unique/email" ON "User" ("email")"# + "\n")
      #expect(try sqlite(folder, "SELECT name FROM pragma_table_info('User')") == "id\nfullName\nemail\n")
    }
    var clash = ChangeSet()
    clash.insert(Row([.int(101), .string("n"), .string("p1@example.com")]), into: "User")
    _ = await expectCode(.uniqueViolation) { try await backend.apply(clash) }
  }

  @Test func relabelSwapsFieldNamesAndChangesOnlyCase() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    let pair = try EntitySchema(
      name: "pair", fields: [Field("id", .int), Field("a", .string), Field("b", .string)], idField: "id",
      indexes: [.on("a")])
    try await backend.prepare([pair])
    var changes = ChangeSet()
    changes.insert(Row([.int(1), .string("first"), .string("second")]), into: "pair")
    try await backend.apply(changes)
    let swapped = try EntitySchema(
      name: "Pair", fields: [Field("id", .int), Field("b", .string), Field("A", .string)], idField: "id",
      indexes: [.on("b")])
    try await backend.editSchema { try $0.relabel("pair", as: swapped) }
    #expect(try await rows(backend, "Pair") == [Row([.int(1), .string("first"), .string("second")])])
    let fetched = try await backend.fetch(
      Query(entity: "Pair", filter: .compare(field: "b", op: .equal, value: .string("first"))))
    #expect(fetched.count == 1)
    if hasSQLiteTool {
      #expect(try sqlite(folder, "SELECT name FROM pragma_table_info('Pair')") == "id\nb\nA\n")
      #expect(try sqlite(folder, "SELECT \"b\" FROM \"Pair\"") == "first\n")
    }
  }

  @Test func relabelKeepsTheColumnOfAFieldNoLongerDeclared() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    let v1 = try EntitySchema(
      name: "Note",
      fields: [Field("id", .int), Field("old", .string, isOptional: true), Field("text", .string)],
      idField: "id")
    try await backend.prepare([v1])
    var changes = ChangeSet()
    changes.insert(Row([.int(1), .string("kept"), .string("hello")]), into: "Note")
    try await backend.apply(changes)
    // The field goes; its column stays in the table, with its data.
    let v2 = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    try await backend.prepare([v2])
    let v3 = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("old", .string)], idField: "id")
    try await backend.editSchema { try $0.relabel("Note", as: v3) }
    #expect(try await rows(backend, "Note") == [Row([.int(1), .string("hello")])])
    if hasSQLiteTool {
      #expect(try sqlite(folder, "SELECT name FROM pragma_table_info('Note')") == "id\nold\nold_2\n")
      #expect(try sqlite(folder, #"SELECT "old", "old_2" FROM "Note""#) == "kept|hello\n")
    }
    #expect(try await backend.checkStorage().isEmpty)
  }

  @Test func relabelRefusesAnythingButNames() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let changedKind = try EntitySchema(
      name: "Person",
      fields: [Field("id", .int), Field("name", .int), Field("email", .string, isOptional: true)],
      idField: "id", indexes: [.on("name"), .unique("email")])
    let error = await expectCode(.invalidSchema) {
      try await backend.editSchema { try $0.relabel("Person", as: changedKind) }
    }
    #expect(error?.field == "name")
    let fewerIndexes = try EntitySchema(name: "Person", fields: Self.person.fields, idField: "id")
    _ = await expectCode(.invalidSchema) {
      try await backend.editSchema { try $0.relabel("Person", as: fewerIndexes) }
    }
    let ontoTag = try EntitySchema(
      name: "Tag", fields: Self.person.fields, idField: "id", indexes: Self.person.indexes)
    _ = await expectCode(.invalidSchema) {
      try await backend.editSchema { try $0.relabel("Person", as: ontoTag) }
    }
    _ = await expectCode(.unknownEntity) {
      try await backend.editSchema { try $0.relabel("Nobody", as: Self.person) }
    }
    #expect(try await rows(backend, "Person").count == 3)
  }

  @Test func aThrownBodyChangesNothing() async throws {
    struct Stop: Error, Equatable {}
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let user = try EntitySchema(
      name: "User", fields: Self.person.fields, idField: "id", indexes: Self.person.indexes)
    await #expect(throws: Stop()) {
      try await backend.editSchema { editor in
        try editor.insert(person(4), into: "Person")
        try editor.relabel("Person", as: user)
        try editor.drop("Tag")
        try editor.create(EntitySchema(name: "Tag", fields: [Field("id", .int)], idField: "id"))
        try editor.record(MigrationRecord(name: "one", position: 0, appliedAt: Date(), rowsTouched: 4))
        throw Stop()
      }
    }
    #expect(try await rows(backend, "Person") == (1...3).map { person(Int64($0)) })
    #expect(try await rows(backend, "Tag").isEmpty)
    var changes = ChangeSet()
    changes.insert(Row([.string("t"), .string("label")]), into: "Tag")
    try await backend.apply(changes)
    let (schemas, log) = try await backend.editSchema { (try $0.schemas(), try $0.migrations()) }
    #expect(schemas == [Self.person, Self.tag])
    #expect(log.isEmpty)
  }

  @Test func aReopenedStoreSeesTheCommittedChanges() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let user = try EntitySchema(
      name: "User", fields: Self.person.fields, idField: "id", indexes: Self.person.indexes)
    let step = MigrationRecord(
      name: "rename", position: 0, appliedAt: Date(timeIntervalSince1970: 1_700_000_000.123), rowsTouched: 0)
    try await backend.editSchema { editor in
      try editor.relabel("Person", as: user)
      try editor.drop("Tag")
      try editor.record(step)
    }
    try await backend.close()
    let reopened = try SQLiteBackend(path: folder.file("store.sqlite"))
    #expect(try await reopened.prepare([user]) == [user])
    #expect(try await rows(reopened, "User") == (1...3).map { person(Int64($0)) })
    #expect(try await reopened.editSchema { try $0.migrations() } == [step])
    #expect(try await reopened.checkStorage().isEmpty)
  }

  @Test func theLogRecordsStepsInOrderAndRefusesATakenPosition() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    #expect(try await backend.editSchema { try $0.migrations() }.isEmpty)
    let first = MigrationRecord(
      name: "a", position: 0, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 3)
    let second = MigrationRecord(
      name: "b", position: 1, appliedAt: Date(timeIntervalSince1970: 2), rowsTouched: 0)
    try await backend.editSchema { try $0.record(first) }
    try await backend.editSchema { try $0.record(second) }
    #expect(try await backend.editSchema { try $0.migrations() } == [first, second])
    _ = await expectCode(.conflict) { try await backend.editSchema { try $0.record(first) } }
    if hasSQLiteTool {
      #expect(try sqlite(folder, #"SELECT "position" FROM "coffer_migrations""#) == "0\n1\n")
    }
  }

  @Test func anEntityNamedLikeTheLogKeepsItsRows() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    let named = try EntitySchema(name: "coffer_migrations", fields: [Field("id", .int)], idField: "id")
    try await backend.prepare([named])
    var changes = ChangeSet()
    changes.insert(Row([.int(7)]), into: "coffer_migrations")
    try await backend.apply(changes)
    let step = MigrationRecord(
      name: "a", position: 0, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 0)
    try await backend.editSchema { try $0.record(step) }
    #expect(try await backend.editSchema { try $0.migrations() } == [step])
    #expect(try await rows(backend, "coffer_migrations") == [Row([.int(7)])])
  }

  @Test func statementsAreNotReusedForATableRecreatedUnderItsName() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    #expect(try await rows(backend, "Tag").isEmpty)
    var changes = ChangeSet()
    changes.insert(Row([.string("t1"), .string("one")]), into: "Tag")
    try await backend.apply(changes)
    let tag2 = try EntitySchema(
      name: "Tag", fields: [Field("id", .string), Field("weight", .int), Field("label", .string)],
      idField: "id")
    try await backend.editSchema { editor in
      var old: [Row] = []
      try editor.scan("Tag") { old.append(try Row($0)) }
      try editor.drop("Tag")
      try editor.create(tag2)
      for row in old { try editor.insert(Row([row[0], .int(5), row[1]]), into: "Tag") }
    }
    #expect(try await rows(backend, "Tag") == [Row([.string("t1"), .int(5), .string("one")])])
    var more = ChangeSet()
    more.insert(Row([.string("t2"), .int(6), .string("two")]), into: "Tag")
    more.update(Row([.string("t1"), .int(7), .string("uno")]), in: "Tag")
    try await backend.apply(more)
    let got = try await backend.fetch(
      Query(entity: "Tag", filter: .compare(field: "id", op: .equal, value: .string("t1"))))
    #expect(got == [Row([.string("t1"), .int(7), .string("uno")])])
    #expect(try await backend.prepare([tag2]).contains(tag2))
  }

  @Test func theEditorRefusesWorkAfterItsBody() async throws {
    final class Keeper: @unchecked Sendable {
      // `@unchecked Sendable`: written once inside the body and read after it returned.
      var editor: (any SchemaEditor)?
    }
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let keeper = Keeper()
    try await backend.editSchema { keeper.editor = $0 }
    #expect(throws: CofferError.self) { try keeper.editor?.schemas() }
    do {
      _ = try keeper.editor?.schemas()
    } catch let error as CofferError {
      #expect(error.code == .closed)
    }
  }
}

/// Runs `body`, expecting it to throw a ``CofferError`` with `code`; returns the error.
private func expectCode(
  _ code: CofferError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async -> CofferError? {
  do {
    try await body()
    Issue.record("Expected a \(code) error, but the call succeeded", sourceLocation: sourceLocation)
  } catch let error as CofferError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
    return error
  } catch {
    Issue.record("Expected a \(code) error, got \(error)", sourceLocation: sourceLocation)
  }
  return nil
}
