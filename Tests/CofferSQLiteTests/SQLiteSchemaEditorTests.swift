@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferSQLite

/// The SQLite backend's schema editor: each primitive a migration step is built from, the
/// transaction around them, and what the backend's caches make of the changes.
@Suite struct SQLiteSchemaEditorTests {
  static let person = SchemaEditorCheck.person
  static let tag = SchemaEditorCheck.tag

  /// A store with `Person` rows 1...count and an empty `Tag`.
  func makeStore(_ folder: TemporaryFolder, people count: Int = 3) async throws -> SQLiteBackend {
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    try await SchemaEditorCheck.fill(backend, people: count)
    return backend
  }

  func person(_ id: Int64) -> Row { SchemaEditorCheck.person(id) }

  func rows(_ backend: SQLiteBackend, _ entity: String) async throws -> [Row] {
    try await backend.fetch(Query(entity: entity))
  }

  func sqlite(_ folder: TemporaryFolder, _ sql: String) throws -> String {
    try runTool("sqlite3", [folder.file("store.sqlite"), sql]).output
  }

  @Test(arguments: SchemaEditorCheck.allCases)
  func behavesAsEverySQLBackendsEditorDoes(_ check: SchemaEditorCheck) async throws {
    let folder = try TemporaryFolder()
    try await check.run(on: try await makeStore(folder, people: check.people))
  }

  @Test func declaresMigrations() throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    #expect((backend as any StorageBackend) is any SchemaEditing)
  }

  @Test func aStoreNeverPreparedHasNoEntitiesAndAnEmptyLog() async throws {
    let folder = try TemporaryFolder()
    try await SchemaEditorCheck.checkAStoreNeverPrepared(try SQLiteBackend(path: folder.file("store.sqlite")))
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
    try await SchemaEditorCheck.relabelPersonAsUser(backend, people: 100)
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
  }

  @Test func relabelSwapsFieldNamesAndChangesOnlyCase() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    try await SchemaEditorCheck.preparePair(backend, named: "pair", indexes: [.on("a")])
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
    try await SchemaEditorCheck.relabelOntoAFieldNoLongerDeclared(backend)
    if hasSQLiteTool {
      // The field went; its column stayed in the table, with its data.
      #expect(try sqlite(folder, "SELECT name FROM pragma_table_info('Note')") == "id\nold\nold_2\n")
      #expect(try sqlite(folder, #"SELECT "old", "old_2" FROM "Note""#) == "kept|hello\n")
    }
    #expect(try await backend.checkStorage().isEmpty)
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

  @Test func theLogIsATableOfPositions() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    for position in 0...1 {
      let step = MigrationRecord(
        name: "s\(position)", position: position, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 0)
      try await backend.editSchema { try $0.record(step) }
    }
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
