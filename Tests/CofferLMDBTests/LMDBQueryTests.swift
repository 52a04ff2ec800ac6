@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

/// Index and id walks answer exactly as the reference evaluator does.
@Suite struct LMDBQueryTests {
  static let date = Date(timeIntervalSince1970: 1_700_000_100)
  static let queries: [(String, Filter, [Sort], Int?, Int)] = [
    ("thread page", FieldRef("thread") == 1, [Sort("date", ascending: false)], 50, 0),
    ("thread page offset", FieldRef("thread") == 2, [Sort("date", ascending: false)], 7, 5),
    ("thread ascending", FieldRef("thread") == 0, [Sort("date")], nil, 0),
    (
      "thread after date", FieldRef("thread") == 1 && FieldRef("date") > date,
      [Sort("date", ascending: false)],
      20, 0
    ),
    (
      "thread date range",
      FieldRef("thread") == 1 && FieldRef("date") >= date && FieldRef("date") < date + 90, [], nil, 0
    ),
    (
      "thread with id tie-break descending", FieldRef("thread") == 2,
      [Sort("date", ascending: false), Sort("id", ascending: false)], 9, 0
    ),
    ("thread only", FieldRef("thread") == 2, [], nil, 0),
    ("unique equal", FieldRef("handle") == "h5", [], nil, 0),
    ("unique null", FieldRef("handle") == nil, [Sort("id", ascending: false)], nil, 0),
    (
      "unique prefix descending", FieldRef("handle").hasPrefix("h1"), [Sort("handle", ascending: false)], 12,
      3
    ),
    ("score zero", FieldRef("score") == 0.0, [], nil, 0),
    ("score negative zero", FieldRef("score") == -0.0, [], nil, 0),
    ("score below", FieldRef("score") < 0.0, [Sort("score")], nil, 0),
    ("score top", FieldRef("score") >= 1.0, [Sort("score", ascending: false)], 7, 0),
    ("score sort only", .all, [Sort("score", ascending: false)], 10, 2),
    (
      "id range descending", FieldRef("id") > 100 && FieldRef("id") <= 200, [Sort("id", ascending: false)],
      10, 0
    ),
    ("id in", .isIn("id", [5, 3, 999, 3, 77]), [], nil, 0),
    ("id in descending", .isIn("id", [5, 3, 77]), [Sort("id", ascending: false)], nil, 0),
    ("id equal", FieldRef("id") == 42, [], nil, 0),
    ("scan", FieldRef("text").contains("1"), [Sort("read")], 30, 4),
    (
      "or of indexed", FieldRef("thread") == 1 || FieldRef("score") == 2.0, [Sort("date", ascending: false)],
      nil, 0
    ),
    ("not thread", !(FieldRef("thread") == 1), [], 40, 0),
    ("everything descending", .all, [Sort("id", ascending: false)], 15, 0),
  ]

  @Test func indexAndIDWalksMatchTheReference() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.file("store"))
    try await store.prepare([Note.self])
    let notes = (1...300).map(sampleNote)
    try await store.insert(notes)
    let schema = try #require(store.schema(of: "Note"))
    var reference = InMemoryTables()
    try reference.prepare([schema])
    _ = try reference.apply(
      ChangeSet(try notes.map { .insert(entity: "Note", row: try EntityCodec<Note>().encode($0)) }))

    for (label, filter, sort, limit, offset) in Self.queries {
      let query = try QueryValidator.validate(
        Query(entity: "Note", filter: filter, sort: sort, limit: limit, offset: offset), schema: schema)
      let expected = try reference.fetch(query)
      let got = try await store.fetchRows(query)
      #expect(got.map { $0[0] } == expected.map { $0[0] }, "\(label)")
      #expect(got == expected, "\(label)")
      #expect(try await store.countRows(query) == expected.count, "\(label) count")
    }
    try await store.close()
  }

  @Test func threadPagesWalkTheCompoundIndexInOrder() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.file("store"))
    let schema = try EntitySchema(for: Note.self)
    try await backend.prepare([schema])
    let handle = try backend.handle("Note")
    let page = try QueryPlan(
      Query(
        entity: "Note", filter: FieldRef("thread") == 1, sort: [Sort("date", ascending: false)], limit: 50),
      handle: handle)
    guard case .index(let index, let range) = page.access else {
      Issue.record("a thread page should walk an index, not \(page.access)")
      return
    }
    #expect(index.index.fields == ["thread", "date"])
    #expect(range.descending)
    #expect(page.isOrdered)
    let scan = try QueryPlan(Query(entity: "Note", filter: FieldRef("text") == "x"), handle: handle)
    guard case .rows = scan.access else {
      Issue.record("an unindexed filter should scan the rows, not \(scan.access)")
      return
    }
    try await backend.close()
  }

  /// An index walk that must visit its whole range gives way to a walk of every row when the
  /// range holds more than one row in ``LMDBBackend/rowsPerLookup``; a narrow range, or an
  /// ordered walk that a limit stops early, keeps the index.
  @Test func anIndexRangeHoldingMostRowsIsWalkedAsEveryRow() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.file("store"))
    let schema = try EntitySchema(
      name: "Item", fields: [Field("id", .int), Field("kind", .int), Field("size", .int)], idField: "id",
      indexes: [.on("kind")])
    try await backend.prepare([schema])
    // Kind 0 on 90 rows of 100, kind 1 on the other 10.
    try await backend.apply(
      ChangeSet(
        (0..<100).map { .insert(entity: "Item", row: Row([.int($0), .int($0 % 10 == 0 ? 1 : 0), .int($0)])) })
    )
    let handle = try backend.handle("Item")
    func access(_ query: Query) throws -> String {
      try backend.environment.read { transaction in
        switch try backend.plan(query, handle: handle, in: transaction).access {
        case .ids: "ids"
        case .rows: "rows"
        case .index: "index"
        }
      }
    }
    let common = Query(entity: "Item", filter: FieldRef("kind") == 0 && FieldRef("size") > 3)
    let rare = Query(entity: "Item", filter: FieldRef("kind") == 1 && FieldRef("size") > 3)
    #expect(try access(common) == "rows")
    #expect(try access(rare) == "index")
    #expect(try access(Query(entity: "Item", filter: FieldRef("kind") >= 0)) == "rows")
    #expect(try access(Query(entity: "Item", filter: FieldRef("kind") >= 1)) == "index")
    #expect(
      try access(Query(entity: "Item", filter: FieldRef("kind") == 0, sort: [Sort("kind")], limit: 5))
        == "index")
    // Either walk gives the same rows.
    let commonIDs = (4..<100).filter { $0 % 10 != 0 }
    #expect(try await backend.fetch(common).map { $0[0] } == commonIDs.map { .int(Int64($0)) })
    #expect(try await backend.count(common) == commonIDs.count)
    #expect(try await backend.count(rare) == 9)
    try await backend.close()
  }

  @Test func aNewIndexIsBuiltOverStoredRows() async throws {
    let folder = try TemporaryFolder()
    let plain = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("thread", .int), Field("text", .string)], idField: "id")
    let store = try await openStore(folder.file("store"))
    try await store.prepare(schemas: [plain])
    try await store.apply(
      ChangeSet(
        (1...50).map { .insert(entity: "Note", row: Row([.int($0), .int($0 % 5), .string("t\($0)")])) }))
    try await store.close()

    let indexed = try EntitySchema(
      name: "Note", fields: plain.fields, idField: "id", indexes: [.on("thread"), .unique("text")])
    let backend = try LMDBBackend(path: folder.file("store"))
    try await backend.prepare([indexed])
    let query = Query(entity: "Note", filter: FieldRef("thread") == 3)
    guard case .index = try QueryPlan(query, handle: backend.handle("Note")).access else {
      Issue.record("the new index is not used")
      return
    }
    #expect(try await backend.fetch(query).map { $0[0] } == (1...50).filter { $0 % 5 == 3 }.map { .int($0) })
    await #expect(throws: CofferError.self) {
      try await backend.apply(ChangeSet([.insert(entity: "Note", row: Row([51, 1, "t7"]))]))
    }
    try await backend.close()
  }
}
