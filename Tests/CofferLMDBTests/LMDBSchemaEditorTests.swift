import CLMDB
@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Synchronization
import Testing

@_spi(Backend) @testable import CofferLMDB

/// A body's own error, to see that `editSchema` rethrows it as it is.
private struct Refused: Error, Equatable {
  let step: Int
}

private let bookFields = [
  Field("id", .int), Field("title", .string), Field("isbn", .string, isOptional: true),
]

private func bookSchema(_ name: String = "Book") throws -> EntitySchema {
  try EntitySchema(name: name, fields: bookFields, idField: "id", indexes: [.unique("isbn"), .on("title")])
}

/// A store with `Book` (three rows) and `Shelf` (one row) prepared.
private func bookStore(_ folder: TemporaryFolder, configuration: LMDBBackend.Configuration = .init())
  async throws
  -> LMDBBackend
{
  let backend = try LMDBBackend(path: folder.path, configuration: configuration)
  let shelf = try EntitySchema(name: "Shelf", fields: [Field("id", .string)], idField: "id")
  try await backend.prepare([try bookSchema(), shelf])
  try await backend.apply(
    ChangeSet([
      .insert(entity: "Book", row: Row([1, "Dune", "isbn-1"])),
      .insert(entity: "Book", row: Row([2, "Emma", .null])),
      .insert(entity: "Book", row: Row([3, "Ulysses", "isbn-3"])),
      .insert(entity: "Shelf", row: Row(["top"])),
    ]))
  return backend
}

/// Every key and value of the catalog, as a reader sees it now.
private func catalogEntries(_ backend: LMDBBackend) throws -> [[UInt8]: [UInt8]] {
  try backend.environment.read { transaction in
    var entries: [[UInt8]: [UInt8]] = [:]
    try transaction.withCursor(backend.catalog) { cursor in
      var found = try cursor.move(MDB_FIRST)
      while found {
        entries[Array(cursor.key)] = Array(cursor.data)
        found = try cursor.move(MDB_NEXT)
      }
    }
    return entries
  }
}

/// The stored bytes of every row of an entity, by id key.
private func rowBytes(_ backend: LMDBBackend, _ database: String) throws -> [[UInt8]: [UInt8]] {
  let rows = try backend.environment.write { try #require(try $0.open(database, flags: 0)) }
  return try backend.environment.read { transaction in
    var entries: [[UInt8]: [UInt8]] = [:]
    try transaction.withCursor(rows) { cursor in
      var found = try cursor.move(MDB_FIRST)
      while found {
        entries[Array(cursor.key)] = Array(cursor.data)
        found = try cursor.move(MDB_NEXT)
      }
    }
    return entries
  }
}

private func record(_ backend: LMDBBackend, _ entity: String) throws -> Catalog.EntityRecord? {
  try backend.environment.read { try Catalog.record(entity, in: $0, catalog: backend.catalog) }
}

/// Expects `body` to throw a ``CofferError`` with `code`.
private func expectError(
  _ code: CofferError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
  do {
    try await body()
    Issue.record("Expected a \(code) error; nothing was thrown.", sourceLocation: sourceLocation)
  } catch let error as CofferError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
  } catch {
    Issue.record(error, sourceLocation: sourceLocation)
  }
}

@Suite struct LMDBSchemaEditorTests {
  @Test func schemasListsTheStoredEntitiesByNameWithTheEditsSoFar() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let names = try await backend.editSchema { editor in
      let before = try editor.schemas().map(\.name)
      try editor.create(try EntitySchema(name: "Author", fields: [Field("id", .int)], idField: "id"))
      try editor.drop("Shelf")
      return [before, try editor.schemas().map(\.name)]
    }
    #expect(names == [["Book", "Shelf"], ["Author", "Book"]])
    #expect(try await backend.prepare([]).map(\.name) == ["Author", "Book"])
    try await backend.close()
  }

  @Test func scanVisitsEveryRowInTheStoredSchema() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let rows = try await backend.editSchema { editor in
      var rows: [Row] = []
      try editor.scan("Book") { rows.append(try Row($0)) }
      return rows
    }
    #expect(
      Set(rows) == [Row([1, "Dune", "isbn-1"]), Row([2, "Emma", .null]), Row([3, "Ulysses", "isbn-3"])])
    await expectError(.unknownEntity) {
      try await backend.editSchema { editor in try editor.scan("Nothing") { _ in } }
    }
    try await backend.close()
  }

  @Test func anErrorThrownByTheVisitorStopsTheScanUnchanged() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    await #expect(throws: Refused(step: 7)) {
      try await backend.editSchema { editor in try editor.scan("Book") { _ in throw Refused(step: 7) } }
    }
    try await backend.close()
  }

  @Test func createMakesAnEmptyEntityWithItsIndexesReadableAtOnce() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let author = try EntitySchema(
      name: "Author", fields: [Field("id", .int), Field("name", .string)], idField: "id",
      indexes: [.unique("name")])
    try await backend.editSchema { editor in
      try editor.create(author)
      try editor.insert(Row([1, "Herbert"]), into: "Author")
    }
    #expect(
      try await backend.fetch(Query(entity: "Author", filter: FieldRef("name") == "Herbert")) == [
        Row([1, "Herbert"])
      ])
    await expectError(.uniqueViolation) {
      try await backend.apply(ChangeSet([.insert(entity: "Author", row: Row([2, "Herbert"]))]))
    }
    let stored = try #require(try record(backend, "Author"))
    #expect(stored.rows == "rows:Author")
    #expect(stored.indexes == ["unique:Author:name"])
    #expect(try await backend.checkStorage().isEmpty)
    try await backend.close()
  }

  @Test func createRefusesAStoredName() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    await expectError(.invalidSchema) {
      try await backend.editSchema { editor in try editor.create(try bookSchema()) }
    }
    try await backend.close()
  }

  @Test func insertMaintainsIndexesAndRaisesWhatABatchRaises() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    try await backend.editSchema { editor in
      try editor.insert(Row([4, "Middlemarch", "isbn-4"]), into: "Book")
    }
    #expect(try await backend.fetch(Query(entity: "Book", filter: FieldRef("isbn") == "isbn-4")).count == 1)
    #expect(
      try await backend.fetch(Query(entity: "Book", filter: FieldRef("title") == "Middlemarch")).count == 1)
    await expectError(.duplicateID) {
      try await backend.editSchema { editor in try editor.insert(Row([1, "Again", .null]), into: "Book") }
    }
    await expectError(.uniqueViolation) {
      try await backend.editSchema { editor in try editor.insert(Row([5, "Copy", "isbn-1"]), into: "Book") }
    }
    await expectError(.invalidValue) {
      try await backend.editSchema { editor in try editor.insert(Row([5, "Short"]), into: "Book") }
    }
    await expectError(.unknownEntity) {
      try await backend.editSchema { editor in try editor.insert(Row([5]), into: "Nothing") }
    }
    #expect(try await backend.count(Query(entity: "Book")) == 4)
    try await backend.close()
  }

  @Test func dropRemovesRowsIndexesAndCatalogEntry() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let old = try #require(try record(backend, "Book"))
    try await backend.editSchema { editor in try editor.drop("Book") }
    #expect(try record(backend, "Book") == nil)
    await expectError(.unknownEntity) { _ = try await backend.count(Query(entity: "Book")) }
    for database in [old.rows] + old.indexes { #expect(try rowBytes(backend, database).isEmpty) }
    // The emptied databases are retired, not left behind.
    #expect(try await backend.checkStorage().isEmpty)
    await expectError(.unknownEntity) {
      try await backend.editSchema { editor in try editor.drop("Book") }
    }
    // Something writing to a retired database is reported.
    try backend.environment.write { transaction in
      let rows = try #require(try transaction.open(old.rows, flags: 0))
      try transaction.put(rows, [1], [1])
    }
    let problems = try await backend.checkStorage()
    #expect(problems.count == 1)
    #expect(problems.first?.message.contains("'\(old.rows)' of a dropped entity") == true)
    try await backend.close()
  }

  @Test func dropThenCreateTheSameNameWithAnotherSchema() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let old = try backend.handle("Book")
    let other = try EntitySchema(
      name: "Book", fields: [Field("id", .string), Field("pages", .int)], idField: "id",
      indexes: [.on("pages")])
    try await backend.editSchema { editor in
      try editor.drop("Book")
      try editor.create(other)
      try editor.insert(Row(["b1", 300]), into: "Book")
    }
    #expect(try await backend.fetch(Query(entity: "Book")) == [Row(["b1", 300])])
    let stored = try #require(try record(backend, "Book"))
    #expect(stored.rows == "rows:Book~2")
    #expect(stored.layouts == [other])
    // A reader still holding the dropped entity's handle finds its database empty, never the
    // new entity's rows.
    #expect(try backend.environment.read { try $0.entryCount(old.rows) } == 0)
    #expect(try await backend.checkStorage().isEmpty)

    // A second round, across two edits, takes the next names.
    try await backend.editSchema { editor in try editor.drop("Book") }
    try await backend.editSchema { editor in try editor.create(try bookSchema()) }
    #expect(try record(backend, "Book")?.rows == "rows:Book~3")
    #expect(try await backend.count(Query(entity: "Book")) == 0)
    try await backend.close()

    let reopened = try LMDBBackend(path: folder.path)
    try await reopened.prepare([try bookSchema()])
    #expect(try await reopened.count(Query(entity: "Book")) == 0)
    #expect(try await reopened.checkStorage().isEmpty)
    try await reopened.close()
  }

  @Test func prepareGivesANewEntityNamesNoDatabaseHas() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    // Novel keeps Book's databases; a Book prepared afterwards must not share them.
    try await backend.editSchema { editor in try editor.relabel("Book", as: try bookSchema("Novel")) }
    try await backend.prepare([try bookSchema()])
    #expect(try record(backend, "Book")?.rows == "rows:Book~2")
    #expect(try record(backend, "Novel")?.rows == "rows:Book")
    #expect(try await backend.count(Query(entity: "Book")) == 0)
    #expect(try await backend.count(Query(entity: "Novel")) == 3)
    #expect(try await backend.checkStorage().isEmpty)
    try await backend.close()
  }

  /// Another handle whose Book was dropped and recreated by an edit refuses to write through
  /// its stale handle (its rows would go to the retired database) but writes other entities.
  @Test func anotherHandleRefusesToWriteAnEntityAnEditReplaced() async throws {
    let folder = try TemporaryFolder()
    let editing = try await bookStore(folder)
    let other = try LMDBBackend(path: folder.path)
    let shelf = try EntitySchema(name: "Shelf", fields: [Field("id", .string)], idField: "id")
    try await other.prepare([try bookSchema(), shelf])
    let pages = try EntitySchema(
      name: "Book", fields: [Field("id", .int), Field("pages", .int)], idField: "id")
    try await editing.editSchema { editor in
      try editor.drop("Book")
      try editor.create(pages)
    }
    await expectError(.schemaMismatch) {
      try await other.apply(ChangeSet([.insert(entity: "Book", row: Row([4, "Lost", .null]))]))
    }
    #expect(try rowBytes(editing, "rows:Book").isEmpty)
    try await other.apply(ChangeSet([.insert(entity: "Shelf", row: Row(["bottom"]))]))
    try await editing.apply(ChangeSet([.insert(entity: "Book", row: Row([4, 120]))]))
    #expect(try await editing.fetch(Query(entity: "Book")) == [Row([4, 120])])
    #expect(try await editing.count(Query(entity: "Shelf")) == 2)
    try await other.close()
    try await editing.close()
  }

  @Test func relabelRenamesTheEntityAndItsFieldsWithoutRewritingRows() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let before = try rowBytes(backend, "rows:Book")
    let oldRecord = try #require(try record(backend, "Book"))
    let novel = try EntitySchema(
      name: "Novel",
      fields: [Field("id", .int), Field("name", .string), Field("code", .string, isOptional: true)],
      idField: "id", indexes: [.unique("code"), .on("name")])
    try await backend.editSchema { editor in try editor.relabel("Book", as: novel) }

    #expect(try record(backend, "Book") == nil)
    let relabelled = try #require(try record(backend, "Novel"))
    #expect(relabelled.rows == oldRecord.rows)
    #expect(relabelled.indexes == oldRecord.indexes)
    #expect(relabelled.layouts == [novel])
    #expect(try rowBytes(backend, "rows:Book") == before)
    await expectError(.unknownEntity) { _ = try await backend.count(Query(entity: "Book")) }
    #expect(
      try await backend.fetch(Query(entity: "Novel", filter: FieldRef("code") == "isbn-3"))
        == [Row([3, "Ulysses", "isbn-3"])])
    #expect(try await backend.fetch(Query(entity: "Novel", filter: FieldRef("name") == "Emma")).count == 1)
    #expect(try await backend.checkStorage().isEmpty)
    try await backend.close()

    let reopened = try LMDBBackend(path: folder.path)
    try await reopened.prepare([novel])
    #expect(try await reopened.count(Query(entity: "Novel")) == 3)
    #expect(try rowBytes(reopened, "rows:Book") == before)
    try await reopened.close()
  }

  @Test func relabelRefusesMoreThanNamesAndATakenName() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let retyped = try EntitySchema(
      name: "Book",
      fields: [Field("id", .int), Field("title", .int), Field("isbn", .string, isOptional: true)],
      idField: "id", indexes: [.unique("isbn"), .on("title")])
    await expectError(.invalidSchema) {
      try await backend.editSchema { editor in try editor.relabel("Book", as: retyped) }
    }
    await expectError(.invalidSchema) {
      try await backend.editSchema { editor in try editor.relabel("Book", as: try bookSchema("Shelf")) }
    }
    await expectError(.unknownEntity) {
      try await backend.editSchema { editor in try editor.relabel("Nothing", as: try bookSchema()) }
    }
    try await backend.close()
  }

  /// Rows written under an older layout (by a handle that still has the old schema) read, after
  /// a relabel, with the renamed fields: every layout is renamed alike.
  @Test func relabelKeepsRowsOfOlderLayoutsReadable() async throws {
    let folder = try TemporaryFolder()
    let old = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    let new = try EntitySchema(
      name: "Note",
      fields: [Field("id", .int), Field("text", .string), Field("stars", .int, isOptional: true)],
      idField: "id")
    let writer = try LMDBBackend(path: folder.path)
    try await writer.prepare([old])
    let reader = try LMDBBackend(path: folder.path)
    try await reader.prepare([new])
    try await writer.apply(ChangeSet([.insert(entity: "Note", row: Row([1, "old layout"]))]))
    try await reader.apply(ChangeSet([.insert(entity: "Note", row: Row([2, "new layout", 5]))]))
    try await writer.close()

    let memo = try EntitySchema(
      name: "Memo",
      fields: [Field("id", .int), Field("body", .string), Field("rating", .int, isOptional: true)],
      idField: "id")
    try await reader.editSchema { editor in try editor.relabel("Note", as: memo) }
    let stored = try #require(try record(reader, "Memo"))
    #expect(stored.layouts.map { $0.fields.map(\.name) } == [["id", "body"], ["id", "body", "rating"]])
    #expect(
      try await reader.fetch(Query(entity: "Memo")) == [
        Row([1, "old layout", .null]), Row([2, "new layout", 5]),
      ])
    let scanned = try await reader.editSchema { editor in
      var rows: [Row] = []
      try editor.scan("Memo") { rows.append(try Row($0)) }
      return rows
    }
    #expect(scanned == [Row([1, "old layout", .null]), Row([2, "new layout", 5])])
    try await reader.close()
  }

  /// A field an older layout has and the current one dropped is renamed out of the way when a
  /// relabelled field takes its name, so old rows do not read it as the relabelled field.
  @Test func aDroppedFieldOfAnOlderLayoutGivesWayToARelabelledOne() async throws {
    let folder = try TemporaryFolder()
    let old = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("title", .string), Field("text", .string)],
      idField: "id")
    let new = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    let writer = try LMDBBackend(path: folder.path)
    try await writer.prepare([old])
    let reader = try LMDBBackend(path: folder.path)
    try await reader.prepare([new])
    try await writer.apply(ChangeSet([.insert(entity: "Note", row: Row([1, "dropped", "kept"]))]))
    try await writer.close()

    let renamed = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("title", .string)], idField: "id")
    try await reader.editSchema { editor in try editor.relabel("Note", as: renamed) }
    #expect(try await reader.fetch(Query(entity: "Note")) == [Row([1, "kept"])])
    let stored = try #require(try record(reader, "Note"))
    #expect(stored.layouts[0].fields.map(\.name) == ["id", "title~dropped", "title"])
    try await reader.close()
  }

  @Test func migrationsAreRecordedInOrderInTheCatalog() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let date = Date(timeIntervalSince1970: 1_700_000_000.123)
    let steps = (0..<3).map {
      MigrationRecord(name: "step \($0)", position: $0, appliedAt: date, rowsTouched: $0 * 10)
    }
    #expect(try await backend.editSchema { try $0.migrations() } == [])
    try await backend.editSchema { editor in
      try editor.record(steps[0])
      try editor.record(steps[1])
    }
    try await backend.editSchema { editor in try editor.record(steps[2]) }
    #expect(try await backend.editSchema { try $0.migrations() } == steps)
    let entries = try catalogEntries(backend)
    #expect(entries[Array("migration:00000002".utf8)] == Array(try steps[2].encoded()))
    try await backend.close()

    let reopened = try LMDBBackend(path: folder.path)
    #expect(try await reopened.editSchema { try $0.migrations() } == steps)
    #expect(try await reopened.checkStorage().isEmpty)
    try await reopened.close()
  }

  @Test func aThrowingBodyChangesNothingAndItsErrorIsRethrown() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let catalog = try catalogEntries(backend)
    let rows = try rowBytes(backend, "rows:Book")
    await #expect(throws: Refused(step: 3)) {
      try await backend.editSchema { editor in
        try editor.insert(Row([9, "Nine", "isbn-9"]), into: "Book")
        try editor.relabel("Book", as: try bookSchema("Novel"))
        try editor.drop("Shelf")
        try editor.create(try EntitySchema(name: "Shelf", fields: [Field("id", .int)], idField: "id"))
        try editor.record(MigrationRecord(name: "never", position: 0, appliedAt: Date(), rowsTouched: 1))
        throw Refused(step: 3)
      }
    }
    #expect(try catalogEntries(backend) == catalog)
    #expect(try rowBytes(backend, "rows:Book") == rows)
    #expect(try await backend.count(Query(entity: "Book")) == 3)
    #expect(try await backend.fetch(Query(entity: "Shelf")) == [Row(["top"])])
    #expect(try await backend.editSchema { try $0.migrations() } == [])
    #expect(try await backend.checkStorage().isEmpty)
    try await backend.close()
  }

  @Test func aReopenedStoreSeesTheCommittedEdit() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    try await backend.editSchema { editor in
      try editor.drop("Shelf")
      try editor.relabel("Book", as: try bookSchema("Novel"))
      try editor.insert(Row([4, "Persuasion", .null]), into: "Novel")
    }
    try await backend.close()
    let reopened = try LMDBBackend(path: folder.path)
    #expect(try await reopened.prepare([]) == [try bookSchema("Novel")])
    try await reopened.prepare([try bookSchema("Novel")])
    #expect(try await reopened.count(Query(entity: "Novel")) == 4)
    try await reopened.close()
  }

  @Test func readersAndSnapshotsDuringAnEditSeeTheStateBeforeIt() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let inside = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    try await backend.withSnapshot { snapshot in
      let edit = Task {
        try await backend.editSchema { editor in
          try editor.insert(Row([4, "Persuasion", .null]), into: "Book")
          try editor.drop("Shelf")
          inside.signal()
          release.wait()
        }
      }
      while inside.wait(timeout: .now()) == .timedOut { try await Task.sleep(for: .milliseconds(5)) }
      #expect(try await snapshot.count(Query(entity: "Book")) == 3)
      #expect(try await backend.count(Query(entity: "Book")) == 3)
      #expect(try await backend.count(Query(entity: "Shelf")) == 1)
      release.signal()
      try await edit.value
      #expect(try await snapshot.count(Query(entity: "Book")) == 3)
    }
    #expect(try await backend.count(Query(entity: "Book")) == 4)
    try await backend.close()
  }

  /// Once an edit commits, a snapshot begun before it cannot name the entities it dropped or
  /// created; the others it still reads as they were.
  @Test func aSnapshotAfterAnEditFailsCleanlyOnItsNewEntities() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    try await backend.withSnapshot { snapshot in
      try await backend.editSchema { editor in
        try editor.drop("Shelf")
        try editor.create(try EntitySchema(name: "Shelf", fields: [Field("id", .int)], idField: "id"))
        try editor.create(try EntitySchema(name: "Author", fields: [Field("id", .int)], idField: "id"))
        try editor.insert(Row([9, "Nine", .null]), into: "Book")
      }
      #expect(try await snapshot.count(Query(entity: "Book")) == 3)
      await #expect(throws: CofferError.self) { try await snapshot.count(Query(entity: "Shelf")) }
      await #expect(throws: CofferError.self) { try await snapshot.count(Query(entity: "Author")) }
    }
    #expect(try await backend.count(Query(entity: "Book")) == 4)
    #expect(try await backend.count(Query(entity: "Shelf")) == 0)
    try await backend.close()
  }

  /// The map fills during a large edit; the body is run again on a grown map, even though it
  /// wraps every error the editor throws.
  @Test func theMapGrowsDuringALargeEdit() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder, configuration: .init(mapSize: 256 << 10))
    let runs = Atomic<Int>(0)
    let text = String(repeating: "x", count: 200)
    try await backend.editSchema { editor in
      runs.add(1, ordering: .relaxed)
      do {
        for id in 10..<5_010 {
          try editor.insert(Row([.int(Int64(id)), .string(text), .null]), into: "Book")
        }
      } catch {
        throw CofferError(.migrationFailed, "wrapped")
      }
    }
    #expect(runs.load(ordering: .relaxed) > 1)
    #expect(backend.environment.mapSize > 256 << 10)
    #expect(try await backend.count(Query(entity: "Book")) == 5_003)
    try await backend.close()
  }

  @Test func errorsNameTheRowButCarryNoValues() async throws {
    let folder = try TemporaryFolder()
    let backend = try await bookStore(folder)
    let secret = "secret-isbn-value"
    try await backend.apply(ChangeSet([.insert(entity: "Book", row: Row([7, "Seven", .string(secret)]))]))
    var failure: CofferError?
    do {
      try await backend.editSchema { editor in
        try editor.insert(Row([8, "Eight", .string(secret)]), into: "Book")
      }
    } catch let error as CofferError {
      failure = error
    }
    let error = try #require(failure)
    #expect(error.code == .uniqueViolation)
    #expect(error.entity == "Book")
    #expect(error.id == "8")
    #expect(error.store == backend.name)
    #expect(!error.description.contains(secret))

    var invalid: CofferError?
    do {
      try await backend.editSchema { editor in
        try editor.insert(Row([9, .int(424_242), "Nine"]), into: "Book")
      }
    } catch let error as CofferError {
      invalid = error
    }
    #expect(invalid?.code == .invalidValue)
    #expect(invalid?.store == backend.name)
    #expect(invalid.map { !$0.description.contains("424242") } == true)
    try await backend.close()
  }
}
