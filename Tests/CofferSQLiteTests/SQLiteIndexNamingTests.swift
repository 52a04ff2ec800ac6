@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferSQLite

/// The SQLite backend finds its indexes by what they cover, not by name: SQLite cannot rename
/// an index, so a relabel leaves each index where it is, under a name that may hold the former
/// table or column name, and preparing, querying and checking the store go on using it.
@Suite struct SQLiteIndexNamingTests {
  static let person = try! EntitySchema(
    name: "Person",
    fields: [
      Field("id", .int), Field("name", .string), Field("email", .string, isOptional: true),
      Field("age", .int, isOptional: true),
    ],
    idField: "id", indexes: [.on("name"), .unique("email")])

  /// `Person` with `name` called `fullName`.
  static let renamedField = try! EntitySchema(
    name: "Person",
    fields: [
      Field("id", .int), Field("fullName", .string), Field("email", .string, isOptional: true),
      Field("age", .int, isOptional: true),
    ],
    idField: "id", indexes: [.on("fullName"), .unique("email")])

  /// `Person` called `User`.
  static let user = try! EntitySchema(
    name: "User", fields: person.fields, idField: "id", indexes: person.indexes)

  /// A store with `Person` rows 1...count.
  func makeStore(_ folder: TemporaryFolder, people count: Int64 = 50) async throws -> SQLiteBackend {
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    try await backend.prepare([Self.person])
    try await insertPeople(backend, into: "Person", 1...count)
    return backend
  }

  func insertPeople(_ backend: SQLiteBackend, into entity: String, _ ids: ClosedRange<Int64>) async throws {
    var changes = ChangeSet()
    for id in ids {
      changes.insert(
        Row([.int(id), .string("name \(id)"), .string("p\(id)@example.com"), .int(20 + id % 50)]),
        into: entity)
    }
    try await backend.apply(changes)
  }

  /// Every index in the file, one `name|rootpage|sql` line each, in name order.
  func indexes(_ backend: SQLiteBackend) throws -> [String] {
    try backend.readers.withReader { reader in
      let statement = try reader.statement(
        "SELECT name || '|' || rootpage || '|' || sql FROM sqlite_schema "
          + "WHERE type = 'index' AND sql IS NOT NULL ORDER BY name")
      var lines: [String] = []
      try statement.withBindings([]) {
        while try statement.stepReading() { lines.append(statement.string(at: 0)) }
      }
      return lines
    }
  }

  /// Every table and index in the file with its root page and SQL.
  func layout(_ backend: SQLiteBackend) throws -> [String] {
    try backend.readers.withReader { reader in
      let statement = try reader.statement(
        "SELECT type || '|' || name || '|' || rootpage || '|' || coalesce(sql, '') FROM sqlite_schema "
          + "ORDER BY name")
      var lines: [String] = []
      try statement.withBindings([]) {
        while try statement.stepReading() { lines.append(statement.string(at: 0)) }
      }
      return lines
    }
  }

  /// What `EXPLAIN QUERY PLAN` says of a query, its steps joined by newlines.
  func plan(_ backend: SQLiteBackend, _ sql: String) throws -> String {
    try backend.readers.withReader { reader in
      let statement = try reader.statement("EXPLAIN QUERY PLAN " + sql)
      var steps: [String] = []
      try statement.withBindings([]) {
        while try statement.stepReading() { steps.append(statement.string(at: 3)) }
      }
      return steps.joined(separator: "\n")
    }
  }

  func find(_ backend: SQLiteBackend, _ entity: String, _ field: String, _ value: Value) async throws -> [Row]
  {
    try await backend.fetch(Query(entity: entity, filter: .compare(field: field, op: .equal, value: value)))
  }

  @Test func relabellingAnIndexedFieldLeavesItsIndexInPlace() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let before = try indexes(backend)
    try await backend.editSchema { try $0.relabel("Person", as: Self.renamedField) }

    // The same indexes, b-trees and names; SQLite rewrote the column in their definitions.
    let after = try indexes(backend)
    #expect(after == before.map { $0.replacingOccurrences(of: #"("name")"#, with: #"("fullName")"#) })
    #expect(after.contains { $0.hasPrefix("Person/index/name|") && $0.hasSuffix(#"("fullName")"#) })
    let plan = try plan(backend, #"SELECT * FROM "Person" WHERE "fullName" = 'name 7'"#)
    #expect(plan.contains("USING INDEX Person/index/name"), "\(plan)")
    #expect(try await find(backend, "Person", "fullName", .string("name 7")).map { $0[0] } == [.int(7)])
    #expect(try await backend.checkStorage() == [])
  }

  @Test func relabellingAnEntityLeavesItsIndexesInPlace() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let before = try indexes(backend)
    try await backend.editSchema { try $0.relabel("Person", as: Self.user) }

    #expect(
      try indexes(backend) == before.map { $0.replacingOccurrences(of: #"ON "Person""#, with: #"ON "User""#) }
    )
    let byEmail = try plan(backend, #"SELECT * FROM "User" WHERE "email" = 'p3@example.com'"#)
    #expect(byEmail.contains("USING INDEX Person/unique/email"), "\(byEmail)")
    let byName = try plan(backend, #"SELECT * FROM "User" WHERE "name" = 'name 3'"#)
    #expect(byName.contains("USING INDEX Person/index/name"), "\(byName)")
    #expect(try await find(backend, "User", "email", .string("p3@example.com")).map { $0[0] } == [.int(3)])
    var clash = ChangeSet()
    clash.insert(Row([.int(99), .string("x"), .string("p1@example.com"), .null]), into: "User")
    await #expect(throws: CofferError.self) { try await backend.apply(clash) }
    #expect(try await backend.checkStorage() == [])
  }

  @Test func aNewEntityUnderTheOldNameGetsIndexesOfItsOwn() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    try await backend.editSchema { try $0.relabel("Person", as: Self.user) }
    let userIndexes = try indexes(backend)
    try await backend.editSchema { try $0.create(Self.person) }
    try await insertPeople(backend, into: "Person", 1...5)

    let added = try indexes(backend).filter { !userIndexes.contains($0) }
    #expect(added.map { $0.split(separator: "|")[0] } == ["Person/index/name_2", "Person/unique/email_2"])
    let plan = try plan(backend, #"SELECT * FROM "Person" WHERE "email" = 'p3@example.com'"#)
    #expect(plan.contains("USING INDEX Person/unique/email_2"), "\(plan)")
    var clash = ChangeSet()
    clash.insert(Row([.int(99), .string("x"), .string("p1@example.com"), .null]), into: "Person")
    let error = await #expect(throws: CofferError.self) { try await backend.apply(clash) }
    #expect(error?.code == .uniqueViolation)
    #expect(try await find(backend, "Person", "name", .string("name 2")).map { $0[0] } == [.int(2)])
    #expect(try await backend.checkStorage() == [])
  }

  @Test func kindChangesOneAfterAnotherKeepWorkingIndexes() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let store = Store(backend: backend)
    try await store.migrate(
      MigrationPlan([
        .changeKind("age as double", entity: "Person", field: "age", to: .double),
        .changeKind("age as int", entity: "Person", field: "age", to: .int),
      ]))

    // Each step filled a scratch entity and relabelled it. Its unique index was built in the
    // scratch entity before the rows went in (the second one took a fresh name); the other
    // index was built once the rows were in, at the end of the step, after the relabel.
    let names = try indexes(backend).map { $0.split(separator: "|")[0] }
    #expect(names == ["Person/index/name", "Person~migrating/unique/email_2"])
    let byName = try plan(backend, #"SELECT * FROM "Person" WHERE "name" = 'name 4'"#)
    #expect(byName.contains("USING INDEX Person/index/name"), "\(byName)")
    let plan = try plan(backend, #"SELECT * FROM "Person" WHERE "email" = 'p3@example.com'"#)
    #expect(plan.contains("USING INDEX Person~migrating/unique/email_2"), "\(plan)")
    #expect(try await find(backend, "Person", "name", .string("name 4")).map { $0[0] } == [.int(4)])
    #expect(try await backend.checkStorage() == [])
  }

  @Test func preparingAgainAfterARelabelChangesNothing() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    try await backend.editSchema { try $0.relabel("Person", as: Self.renamedField) }
    let before = try layout(backend)
    try await backend.prepare([Self.renamedField])
    #expect(try layout(backend) == before)
    try await backend.close()

    let reopened = try SQLiteBackend(path: folder.file("store.sqlite"))
    try await reopened.prepare([Self.renamedField])
    #expect(try layout(reopened) == before)
    #expect(try await reopened.checkStorage() == [])
  }

  @Test func evolvingARelabelledEntityKeepsTheIndexesItStillDeclares() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    try await backend.editSchema { try $0.relabel("Person", as: Self.renamedField) }
    let kept = try indexes(backend).filter { $0.hasPrefix("Person/unique/email|") }
    // One field more, the index on fullName gone, one on age new.
    let evolved = try EntitySchema(
      name: "Person", fields: Self.renamedField.fields + [Field("note", .string, isOptional: true)],
      idField: "id", indexes: [.unique("email"), .on("age")])
    try await backend.prepare([evolved])

    let after = try indexes(backend)
    #expect(after.filter { $0.hasPrefix("Person/unique/email|") } == kept)
    #expect(after.map { $0.split(separator: "|")[0] } == ["Person/index/age", "Person/unique/email"])
    #expect(try await backend.checkStorage() == [])
  }

  @Test func aUniqueClashAfterARelabelIsStillReported() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder, people: 3)
    var missing = ChangeSet()
    missing.insert(Row([.int(10), .string("a"), .null, .null]), into: "Person")
    missing.insert(Row([.int(11), .string("b"), .null, .null]), into: "Person")
    try await backend.apply(missing)
    try await backend.editSchema { try $0.relabel("Person", as: Self.user) }
    let before = try layout(backend)

    // A required email with a default gives both rows the same value.
    let required = try EntitySchema(
      name: "User",
      fields: [
        Field("id", .int), Field("name", .string), Field("email", .string, default: .string("none")),
        Field("age", .int, isOptional: true),
      ],
      idField: "id", indexes: Self.user.indexes)
    let error = await #expect(throws: CofferError.self) { try await backend.prepare([required]) }
    #expect(error?.code == .uniqueViolation)
    #expect(error?.idValue == .int(10))
    #expect(try layout(backend) == before)
  }

  @Test func aStoreWithTheUsualNamesOpensAndVerifiesUnchanged() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    let renamed = try Self.user.renamingName()
    try await backend.editSchema { try $0.relabel("Person", as: Self.user) }
    try await backend.editSchema { try $0.relabel("User", as: renamed) }
    // What a relabel made before indexes were found by definition: indexes built again under
    // the names of the new table and column.
    try await backend.blocking.run {
      try backend.withWriter { connection in
        try connection.execute(
          """
          DROP INDEX "Person/index/name"; DROP INDEX "Person/unique/email";
          CREATE INDEX "User/index/fullName" ON "User" ("fullName");
          CREATE UNIQUE INDEX "User/unique/email" ON "User" ("email");
          """)
      }
    }
    let before = try layout(backend)
    try await backend.close()

    let reopened = try SQLiteBackend(path: folder.file("store.sqlite"))
    try await reopened.prepare([renamed])
    #expect(try layout(reopened) == before)
    #expect(try await reopened.checkStorage() == [])
    let plan = try plan(reopened, #"SELECT * FROM "User" WHERE "fullName" = 'name 3'"#)
    #expect(plan.contains("USING INDEX User/index/fullName"), "\(plan)")
  }

  @Test func checkStorageFindsAMissingIndexByDefinition() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    try await backend.editSchema { try $0.relabel("Person", as: Self.renamedField) }
    // The index on fullName is replaced by one on age, under its name.
    try await backend.blocking.run {
      try backend.withWriter { connection in
        try connection.execute(
          #"DROP INDEX "Person/index/name"; CREATE INDEX "Person/index/name" ON "Person" ("age");"#)
      }
    }
    let found = try await backend.checkStorage()
    #expect(found.count == 2, "\(found)")
    #expect(found.contains { $0.field == "index:fullName" && $0.message.contains("missing") }, "\(found)")
    #expect(found.contains { $0.field == nil && $0.message.contains("does not declare") }, "\(found)")
  }

  @Test func anIndexSomeoneElseNamedIsLeftAlone() async throws {
    let folder = try TemporaryFolder()
    let backend = try await makeStore(folder)
    try await backend.blocking.run {
      try backend.withWriter { connection in
        try connection.execute(#"CREATE INDEX "by_age" ON "Person" ("age")"#)
      }
    }
    try await backend.editSchema { try $0.relabel("Person", as: Self.renamedField) }
    let evolved = try EntitySchema(
      name: "Person", fields: Self.renamedField.fields + [Field("note", .string, isOptional: true)],
      idField: "id", indexes: Self.renamedField.indexes)
    try await backend.prepare([evolved])
    #expect(try indexes(backend).contains { $0.hasPrefix("by_age|") })
    #expect(try await backend.checkStorage() == [])
  }
}

extension EntitySchema {
  /// `User` with `name` called `fullName`.
  fileprivate func renamingName() throws -> EntitySchema {
    try EntitySchema(
      name: name, fields: fields.map { $0.name == "name" ? Field("fullName", $0.kind) : $0 },
      idField: idField.name, indexes: indexes.map { $0.fields == ["name"] ? .on("fullName") : $0 })
  }
}
