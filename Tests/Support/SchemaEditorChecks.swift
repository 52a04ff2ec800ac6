@_spi(Backend) import Coffer
import Foundation

/// What a schema editor does the same on every SQL backend, checked once here and run by each
/// backend's tests on a store of its own that ``fill(_:people:)`` prepared: `Person` rows
/// 1...n (``person(_:)``) and an empty `Tag`. A check throws a ``SchemaEditorCheckFailure``
/// naming what differed; what only one engine's catalog can show stays in that engine's tests.
package enum SchemaEditorCheck: String, CaseIterable, Sendable, CustomStringConvertible {
  case schemasListThisTransactionsChanges
  case scanVisitsEveryRowAndCanInsertAndScanMeanwhile
  case createMakesAnEmptyEntityWithItsIndexes
  case insertFailsAsABatchInsertWouldAndNamesNoValue
  case aRefusedInsertLeavesTheStepUsable
  case relabelRefusesAnythingButNames
  case aThrownBodyChangesNothing
  case theLogRecordsStepsInOrderAndRefusesATakenPosition
  case statementsAreNotReusedForATableRecreatedWithOtherKinds
  case theEditorRefusesWorkAfterItsBody

  /// The check's name, as test reports show it.
  package var description: String { rawValue }

  /// The `Person` entity: an id, a name (indexed) and an optional, unique email.
  package static let person = schema(
    "Person", [Field("id", .int), Field("name", .string), Field("email", .string, isOptional: true)],
    indexes: [.on("name"), .unique("email")])

  /// The `Tag` entity: a string id and a label.
  package static let tag = schema("Tag", [Field("id", .string), Field("label", .string)])

  /// The `Person` row with an id.
  package static func person(_ id: Int64) -> Row {
    Row([.int(id), .string("name \(id)"), .string("p\(id)@example.com")])
  }

  /// Prepares `Person` and `Tag` and inserts `Person` rows 1...count, a thousand a batch.
  package static func fill(_ backend: any StorageBackend, people count: Int = 3) async throws {
    try await backend.prepare([person, tag])
    var start = 1
    while start <= count {
      var changes = ChangeSet()
      for id in start...min(count, start + 999) { changes.insert(person(Int64(id)), into: "Person") }
      try await backend.apply(changes)
      start += 1000
    }
  }

  /// How many `Person` rows the check's store holds.
  package var people: Int { self == .scanVisitsEveryRowAndCanInsertAndScanMeanwhile ? 2_500 : 3 }

  /// Runs the check on a backend ``fill(_:people:)`` filled with ``people`` rows.
  package func run(on backend: any StorageBackend & SchemaEditing) async throws {
    switch self {
    case .schemasListThisTransactionsChanges: try await Self.listsSchemas(backend)
    case .scanVisitsEveryRowAndCanInsertAndScanMeanwhile: try await Self.scans(backend)
    case .createMakesAnEmptyEntityWithItsIndexes: try await Self.creates(backend)
    case .insertFailsAsABatchInsertWouldAndNamesNoValue: try await Self.refusesInserts(backend)
    case .aRefusedInsertLeavesTheStepUsable: try await Self.continuesAfterARefusedInsert(backend)
    case .relabelRefusesAnythingButNames: try await Self.refusesRelabels(backend)
    case .aThrownBodyChangesNothing: try await Self.rollsBack(backend)
    case .theLogRecordsStepsInOrderAndRefusesATakenPosition: try await Self.logs(backend)
    case .statementsAreNotReusedForATableRecreatedWithOtherKinds: try await Self.recreates(backend)
    case .theEditorRefusesWorkAfterItsBody: try await Self.closesTheEditor(backend)
    }
  }

  /// Checks a store that was never prepared: no entities, an empty log, nothing to drop, and an
  /// entity its editor creates can be prepared.
  package static func checkAStoreNeverPrepared(_ backend: any StorageBackend & SchemaEditing) async throws {
    let (schemas, log) = try await backend.editSchema { (try $0.schemas(), try $0.migrations()) }
    try expect(
      schemas.isEmpty && log.isEmpty, "a new store lists \(schemas.count) schemas and \(log.count) steps")
    try await expectError(.unknownEntity) { try await backend.editSchema { try $0.drop("Person") } }
    try await backend.editSchema { try $0.create(tag) }
    try expect(try await backend.prepare([tag]) == [tag], "preparing a created entity lists another schema")
  }

  /// `Person` relabelled: the same fields, `name` called `fullName`, and the same indexes.
  package static let user = schema(
    "User", [Field("id", .int), Field("fullName", .string), Field("email", .string, isOptional: true)],
    indexes: [.on("fullName"), .unique("email")])

  /// Relabels `Person` as ``user`` and checks what every backend shows: the rows under the new
  /// name only, the schemas listed, and the unique index still enforced under its new field name.
  package static func relabelPersonAsUser(_ backend: any StorageBackend & SchemaEditing, people: Int)
    async throws
  {
    try await backend.editSchema { try $0.relabel("Person", as: user) }
    let rows = try await backend.fetch(Query(entity: "User"))
    try expect(rows == (1...people).map { person(Int64($0)) }, "the relabelled rows read otherwise")
    try await expectError(.unknownEntity) { _ = try await backend.fetch(Query(entity: "Person")) }
    try expect(
      try await backend.editSchema { try $0.schemas() } == [tag, user], "the schemas list otherwise")
    var clash = ChangeSet()
    clash.insert(Row([.int(Int64(people) + 1), .string("n"), .string("p1@example.com")]), into: "User")
    try await expectError(.uniqueViolation) { try await backend.apply(clash) }
  }

  /// Prepares `Note` with a field `old` and a row, prepares it again without `old` (whose column
  /// stays), then relabels `text` as `old`: the row reads `hello` under the new `old`, whatever
  /// column held the old one. Each backend's test then looks at its columns.
  package static func relabelOntoAFieldNoLongerDeclared(_ backend: any StorageBackend & SchemaEditing)
    async throws
  {
    try await backend.prepare([
      schema("Note", [Field("id", .int), Field("old", .string, isOptional: true), Field("text", .string)])
    ])
    var changes = ChangeSet()
    changes.insert(Row([.int(1), .string("kept"), .string("hello")]), into: "Note")
    try await backend.apply(changes)
    try await backend.prepare([schema("Note", [Field("id", .int), Field("text", .string)])])
    let relabelled = schema("Note", [Field("id", .int), Field("old", .string)])
    try await backend.editSchema { try $0.relabel("Note", as: relabelled) }
    let rows = try await backend.fetch(Query(entity: "Note"))
    try expect(
      rows == [Row([.int(1), .string("hello")])], "the relabelled note reads \(rows.count) rows otherwise")
  }

  /// Prepares an entity `name` of string fields `a` and `b`, indexed as given, holding the one
  /// row (1, "first", "second"), for a relabel that swaps the fields' names.
  package static func preparePair(_ backend: any StorageBackend, named name: String, indexes: [Index])
    async throws
  {
    try await backend.prepare([
      schema(name, [Field("id", .int), Field("a", .string), Field("b", .string)], indexes: indexes)
    ])
    var changes = ChangeSet()
    changes.insert(Row([.int(1), .string("first"), .string("second")]), into: name)
    try await backend.apply(changes)
  }

  private static func listsSchemas(_ backend: any StorageBackend & SchemaEditing) async throws {
    let apple = schema("Apple", [Field("id", .int)])
    let names = try await backend.editSchema { editor in
      let before = try editor.schemas().map(\.name)
      try editor.create(apple)
      try editor.drop("Tag")
      return [before, try editor.schemas().map(\.name)]
    }
    try expect(names == [["Person", "Tag"], ["Apple", "Person"]], "the names listed were \(names)")
    try expect(
      try await backend.editSchema { try $0.schemas() } == [apple, person], "a later step lists others")
  }

  private static func scans(_ backend: any StorageBackend & SchemaEditing) async throws {
    let copy = schema("Copy", person.fields)
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
    try expect(count == 2_500 && inner == 0, "the scans visited \(count) and \(inner) rows")
    let copied = Set(try await backend.fetch(Query(entity: "Copy")))
    try expect(copied == Set((1...2_500).map { person(Int64($0)) }), "the copy holds other rows")
    try await expectError(.unknownEntity) { try await backend.editSchema { try $0.scan("Nobody") { _ in } } }
  }

  private static func creates(_ backend: any StorageBackend & SchemaEditing) async throws {
    let account = schema(
      "Account", [Field("id", .uuid), Field("login", .string)], indexes: [.unique("login")])
    try await backend.editSchema { try $0.create(account) }
    try expect(try await backend.fetch(Query(entity: "Account")).isEmpty, "a new entity has rows")
    try expect(try await backend.prepare([account]).contains(account), "preparing it lists another schema")
    var changes = ChangeSet()
    changes.insert(Row([.uuid(UUID()), .string("same")]), into: "Account")
    changes.insert(Row([.uuid(UUID()), .string("same")]), into: "Account")
    try await expectError(.uniqueViolation) { try await backend.apply(changes) }
    try await expectError(.invalidSchema) { try await backend.editSchema { try $0.create(person) } }
  }

  private static func refusesInserts(_ backend: any StorageBackend & SchemaEditing) async throws {
    let duplicate = try await expectError(.duplicateID) {
      try await backend.editSchema { try $0.insert(person(1), into: "Person") }
    }
    try expect(duplicate.entity == "Person", "a duplicate id names \(duplicate.entity ?? "no entity")")
    let secret = "p2@example.com"
    let clash = try await expectError(.uniqueViolation) {
      try await backend.editSchema {
        try $0.insert(Row([.int(9), .string("x"), .string(secret)]), into: "Person")
      }
    }
    try expect(
      clash.entity == "Person" && clash.field == "email", "a unique clash names another entity or field")
    let text = "\(clash) \(clash.localizedDescription)"
    try expect(!text.contains(secret) && !text.contains("name 2"), "a unique clash's error shows a value")
    try await expectError(.unknownEntity) {
      try await backend.editSchema { try $0.insert(person(1), into: "Nobody") }
    }
    try expect(try await backend.fetch(Query(entity: "Person")).count == 3, "a refused insert stored rows")
  }

  private static func continuesAfterARefusedInsert(_ backend: any StorageBackend & SchemaEditing) async throws
  {
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
    try expect(refused == 2, "\(refused) inserts were refused")
    let stored = try await backend.fetch(Query(entity: "Person"))
    try expect(stored == (1...5).map { person(Int64($0)) }, "the step stored other rows")
  }

  private static func refusesRelabels(_ backend: any StorageBackend & SchemaEditing) async throws {
    let changedKind = schema(
      "Person", [Field("id", .int), Field("name", .int), Field("email", .string, isOptional: true)],
      indexes: person.indexes)
    let error = try await expectError(.invalidSchema) {
      try await backend.editSchema { try $0.relabel("Person", as: changedKind) }
    }
    try expect(error.field == "name", "a changed kind names \(error.field ?? "no field")")
    let fewerIndexes = schema("Person", person.fields)
    try await expectError(.invalidSchema) {
      try await backend.editSchema { try $0.relabel("Person", as: fewerIndexes) }
    }
    let ontoTag = schema("Tag", person.fields, indexes: person.indexes)
    try await expectError(.invalidSchema) {
      try await backend.editSchema { try $0.relabel("Person", as: ontoTag) }
    }
    try await expectError(.unknownEntity) {
      try await backend.editSchema { try $0.relabel("Nobody", as: person) }
    }
    try expect(try await backend.fetch(Query(entity: "Person")).count == 3, "a refused relabel lost rows")
  }

  private static func rollsBack(_ backend: any StorageBackend & SchemaEditing) async throws {
    struct Stop: Error {}
    let user = schema("User", person.fields, indexes: person.indexes)
    do {
      try await backend.editSchema { editor in
        try editor.insert(person(4), into: "Person")
        try editor.relabel("Person", as: user)
        try editor.drop("Tag")
        try editor.create(schema("Tag", [Field("id", .int)]))
        try editor.record(MigrationRecord(name: "one", position: 0, appliedAt: Date(), rowsTouched: 4))
        throw Stop()
      }
      throw SchemaEditorCheckFailure("the body's error was not rethrown")
    } catch is Stop {}
    let people = try await backend.fetch(Query(entity: "Person"))
    try expect(people == (1...3).map { person(Int64($0)) }, "a thrown step changed the rows")
    try expect(try await backend.fetch(Query(entity: "Tag")).isEmpty, "a thrown step left tags")
    var changes = ChangeSet()
    changes.insert(Row([.string("t"), .string("label")]), into: "Tag")
    try await backend.apply(changes)
    let (schemas, log) = try await backend.editSchema { (try $0.schemas(), try $0.migrations()) }
    try expect(schemas == [person, tag] && log.isEmpty, "a thrown step left schemas or a log")
  }

  private static func logs(_ backend: any StorageBackend & SchemaEditing) async throws {
    try expect(try await backend.editSchema { try $0.migrations() }.isEmpty, "a new store has a log")
    let first = MigrationRecord(
      name: "a", position: 0, appliedAt: Date(timeIntervalSince1970: 1), rowsTouched: 3)
    let second = MigrationRecord(
      name: "b", position: 1, appliedAt: Date(timeIntervalSince1970: 2), rowsTouched: 0)
    try await backend.editSchema { try $0.record(first) }
    try await backend.editSchema { try $0.record(second) }
    try expect(
      try await backend.editSchema { try $0.migrations() } == [first, second], "the log reads otherwise")
    try await expectError(.conflict) { try await backend.editSchema { try $0.record(first) } }
  }

  private static func recreates(_ backend: any StorageBackend & SchemaEditing) async throws {
    var changes = ChangeSet()
    changes.insert(Row([.string("t1"), .string("one")]), into: "Tag")
    try await backend.apply(changes)
    let byID = Query(entity: "Tag", filter: .compare(field: "id", op: .equal, value: .string("t1")))
    // Prepares the statements of the old table on the connections a backend pools.
    for _ in 0..<4 {
      try expect(try await backend.fetch(Query(entity: "Tag")).count == 1, "the old table reads otherwise")
      try expect(try await backend.fetch(byID).count == 1, "the old table reads otherwise by id")
    }
    let tag2 = schema("Tag", [Field("id", .string), Field("weight", .int), Field("label", .string)])
    try await backend.editSchema { editor in
      var old: [Row] = []
      try editor.scan("Tag") { old.append(try Row($0)) }
      try editor.drop("Tag")
      try editor.create(tag2)
      for row in old { try editor.insert(Row([row[0], .int(5), row[1]]), into: "Tag") }
    }
    let recreated = [Row([.string("t1"), .int(5), .string("one")])]
    for _ in 0..<4 {
      try expect(try await backend.fetch(Query(entity: "Tag")) == recreated, "the new table reads otherwise")
      try expect(try await backend.fetch(byID) == recreated, "the new table reads otherwise by id")
    }
    var more = ChangeSet()
    more.insert(Row([.string("t2"), .int(6), .string("two")]), into: "Tag")
    more.update(Row([.string("t1"), .int(7), .string("uno")]), in: "Tag")
    try await backend.apply(more)
    let after = try await backend.fetch(Query(entity: "Tag"))
    try expect(
      after == [
        Row([.string("t1"), .int(7), .string("uno")]), Row([.string("t2"), .int(6), .string("two")]),
      ],
      "the new table's writes read otherwise")
    try expect(
      try await backend.prepare([tag2]).contains(tag2), "preparing the new table lists another schema")
  }

  private static func closesTheEditor(_ backend: any StorageBackend & SchemaEditing) async throws {
    final class Keeper: @unchecked Sendable {
      // `@unchecked Sendable`: written once inside the body and read after it returned.
      var editor: (any SchemaEditor)?
    }
    let keeper = Keeper()
    try await backend.editSchema { keeper.editor = $0 }
    do {
      _ = try keeper.editor?.schemas()
      throw SchemaEditorCheckFailure("the editor worked after its body")
    } catch let error as CofferError {
      try expect(error.code == .closed, "the editor after its body failed with \(error.code)")
    }
  }

  private static func schema(_ name: String, _ fields: [Field], indexes: [Index] = []) -> EntitySchema {
    do {
      return try EntitySchema(name: name, fields: fields, idField: "id", indexes: indexes)
    } catch {
      preconditionFailure("The check's schema \(name) is invalid: \(error)")
    }
  }

  private static func expect(_ condition: Bool, _ failure: @autoclosure () -> String) throws {
    if !condition { throw SchemaEditorCheckFailure(failure()) }
  }

  @discardableResult
  private static func expectError(_ code: CofferError.Code, _ body: () async throws -> Void) async throws
    -> CofferError
  {
    do {
      try await body()
    } catch let error as CofferError {
      try expect(error.code == code, "expected a \(code) error, got \(error.code): \(error)")
      return error
    }
    throw SchemaEditorCheckFailure("expected a \(code) error, but the call succeeded")
  }
}

/// What a ``SchemaEditorCheck`` found different.
package struct SchemaEditorCheckFailure: Error, CustomStringConvertible {
  /// What differed.
  package let description: String

  init(_ description: String) { self.description = description }
}
