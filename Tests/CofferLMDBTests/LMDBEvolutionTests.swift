@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

@Suite struct LMDBEvolutionTests {
  @Test func changingOnlyIndexesKeepsTheRowsLayout() async throws {
    let folder = try TemporaryFolder()
    let fields = [Field("id", .int), Field("thread", .int)]
    let plain = try EntitySchema(name: "Note", fields: fields, idField: "id")
    let first = try LMDBBackend(path: folder.path)
    try await first.prepare([plain])
    try await first.apply(ChangeSet([.insert(entity: "Note", row: Row([1, 2]))]))
    try await first.close()

    let indexed = try EntitySchema(name: "Note", fields: fields, idField: "id", indexes: [.on("thread")])
    let second = try LMDBBackend(path: folder.path)
    try await second.prepare([indexed])
    #expect(try second.handle("Note").layout == 0)
    #expect(try await second.fetch(Query(entity: "Note", filter: FieldRef("thread") == 2)) == [Row([1, 2])])
    try await second.close()
  }

  /// A backend still holding the old schema writes a row under the old layout after another
  /// evolved the entity: the evolved backend's reads, in place or not, decode and evolve it.
  @Test func rowsWrittenUnderAnOlderLayoutReadEvolved() async throws {
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

    var read: [Row] = []
    // A lookup by id: the backend's fast path, one B-tree lookup per id.
    try await reader.read(Query(lookingUp: [2, 1], in: new)) { read.append(try Row($0)) }
    #expect(read == [Row([1, "old layout", .null]), Row([2, "new layout", 5])])
    #expect(try await reader.get(entity: new, ids: [2, 1]) == read.reversed())
    read = []
    try await reader.read(Query(entity: "Note")) { read.append(try Row($0)) }
    #expect(read == [Row([1, "old layout", .null]), Row([2, "new layout", 5])])
    #expect(try await reader.fetch(Query(entity: "Note")) == read)

    // A filtered, sorted page decodes only the rows it keeps; a row of the older layout cannot be
    // read in place, so it is decoded, evolved and tested when offered.
    try await writer.apply(
      ChangeSet((3...6).map { .insert(entity: "Note", row: Row([.int($0), .string("old \($0 % 2)")])) }))
    let page = Query(
      entity: "Note", filter: FieldRef("text") != "old 1", sort: [Sort("text", ascending: false)], limit: 3)
    #expect(
      try await reader.fetch(page) == [
        Row([1, "old layout", .null]), Row([4, "old 0", .null]), Row([6, "old 0", .null]),
      ])
    #expect(try await reader.count(page) == 4)
    try await writer.close()
    try await reader.close()
  }

  /// A kind change copies rows inside the engine, byte for byte where it can: a row another
  /// backend wrote under the older layout is decoded, evolved, converted and written whole.
  @Test func aKindChangeConvertsRowsOfAnOlderLayout() async throws {
    let folder = try TemporaryFolder()
    let old = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("n", .int), Field("on", .bool)], idField: "id",
      indexes: [.on("n")])
    let new = try EntitySchema(
      name: "Note",
      fields: [
        Field("id", .int), Field("n", .int), Field("on", .bool), Field("stars", .int, isOptional: true),
      ],
      idField: "id", indexes: [.on("n")])
    let writer = try LMDBBackend(path: folder.path)
    try await writer.prepare([old])
    let reader = try LMDBBackend(path: folder.path)
    try await reader.prepare([new])
    try await writer.apply(ChangeSet([.insert(entity: "Note", row: Row([1, 10, true]))]))
    try await reader.apply(ChangeSet([.insert(entity: "Note", row: Row([2, -20, false, 5]))]))
    try await writer.close()

    let store = Store(backend: reader)
    try await store.migrate(
      MigrationPlan([
        .changeKind("n-text", entity: "Note", field: "n", to: .string, using: .intToString),
        .changeKind("on-int", entity: "Note", field: "on", to: .int, using: .boolToInt),
      ]))
    let stored = try #require(try await reader.prepare([]).first { $0.name == "Note" })
    var all = Query(entity: "Note", sort: [Sort("id")])
    all.layout = stored
    #expect(try await reader.fetch(all) == [Row([1, "10", 1, .null]), Row([2, "-20", 0, 5])])
    var byN = Query(entity: "Note", filter: FieldRef("n") == "10")
    byN.layout = stored
    #expect(try await reader.fetch(byN).count == 1)
    try await reader.close()
  }

  @Test func aLongIDIsAnInvalidValueAndNothingIsApplied() async throws {
    let folder = try TemporaryFolder()
    let schema = try EntitySchema(name: "Tag", fields: [Field("id", .string)], idField: "id")
    let store = try await openStore(folder.path)
    try await store.prepare(schemas: [schema])
    await #expect {
      try await store.apply(
        ChangeSet([
          .insert(entity: "Tag", row: Row(["short"])),
          .insert(entity: "Tag", row: Row([.string(String(repeating: "x", count: 600))])),
        ]))
    } throws: { ($0 as? CofferError)?.code == .invalidValue }
    #expect(try await store.countRows(Query(entity: "Tag")) == 0)
    try await store.close()
  }
}

@Suite struct LMDBLayoutEvolutionTests {
  @Test func twoVersionsOfASchemaReadEachOthersRows() async throws {
    let folder = try TemporaryFolder()
    let old = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    let new = try EntitySchema(
      name: "Note",
      fields: [Field("id", .int), Field("text", .string), Field("pinned", .bool, isOptional: true)],
      idField: "id")
    let first = try LMDBBackend(path: folder.path)
    try await first.prepare([old])
    try await first.apply(ChangeSet([.insert(entity: "Note", row: Row([1, "one"]))]))

    let second = try LMDBBackend(path: folder.path)
    try await second.prepare([new])
    try await second.apply(ChangeSet([.insert(entity: "Note", row: Row([2, "two", true]))]))
    try await first.apply(ChangeSet([.insert(entity: "Note", row: Row([3, "three"]))]))

    #expect(
      try await first.fetch(Query(entity: "Note")) == [
        Row([1, "one"]), Row([2, "two"]), Row([3, "three"]),
      ])
    #expect(
      try await second.fetch(Query(entity: "Note"))
        == [Row([1, "one", .null]), Row([2, "two", true]), Row([3, "three", .null])])
    try await first.close()
    try await second.close()
  }
}
