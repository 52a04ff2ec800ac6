@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import InMemoryTracing
import Testing
import Tracing

@testable import CofferSQLite

/// Each SQL statement a call sends is a child span of the call's span, a batch's commit among
/// them — also when SQLite commits several waiting batches at once — and a store opened without
/// a tracer watches no statement at all.
@Suite struct SQLiteStatementSpanTests {
  private static let schema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Note", fields: [Field("id", .int), Field("title", .string)], idField: "id")
    } catch {
      preconditionFailure("fixture schema: \(error)")
    }
  }()

  private func insert(_ id: Int, into store: Store) async throws {
    try await store.apply(
      ChangeSet([.insert(entity: "Note", row: Row([.int(Int64(id)), .string("n\(id)")]))]))
  }

  @Test func aStoreOpenedWithoutATracerWatchesNoStatement() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    #expect(backend.statementTracer == nil)
    let hooked = try backend.withWriter { $0.statementHook != nil }
    #expect(!hooked, "a connection has a statement hook without a tracer or a statement log")
    try await backend.close()
  }

  @Test func concurrentBatchesEachHaveTheirStatementsAndEveryOneACommit() async throws {
    let folder = try TemporaryFolder()
    let tracer = InMemoryTracer()
    let batches = 24
    try await withTracer(tracer) {
      let store = try await Store.open(url: "sqlite://" + folder.file("store.sqlite"), registry: .builtIn)
      try await store.prepare(schemas: [Self.schema])
      try await withThrowingTaskGroup(of: Void.self) { group in
        for id in 1...batches { group.addTask { try await insert(id, into: store) } }
        try await group.waitForAll()
      }
      _ = try await store.fetchRows(Query(entity: "Note"))
      try await store.close()
    }
    let spans = tracer.finishedSpans
    let applies = spans.filter { $0.operationName == "apply Note" }
    #expect(applies.count == batches)
    func children(of span: FinishedInMemorySpan) -> [FinishedInMemorySpan] {
      spans.filter { $0.parentSpanID == span.spanID }
    }
    let commits = spans.filter { $0.attributes.get("db.operation.name") == .string("COMMIT") }
    let linked = Set(
      commits.flatMap { commit in commit.links.compactMap { $0.context.inMemorySpanContext?.spanID } })
    for apply in applies {
      let operations = children(of: apply).compactMap { span -> String? in
        guard case .string(let name) = span.attributes.get("db.operation.name") else { return nil }
        return name
      }
      #expect(operations.contains("INSERT"), "an apply span without its INSERT: \(operations)")
      let committedHere = operations.contains("COMMIT")
      #expect(committedHere || linked.contains(apply.spanID), "an apply span no commit serves")
    }
    #expect(!commits.isEmpty && commits.count <= batches)
    let fetch = try #require(spans.first { $0.operationName == "fetch Note" })
    let select = try #require(children(of: fetch).first)
    #expect(select.operationName == "SELECT Note")
    #expect(select.attributes.get("db.system.name") == .string("sqlite"))
    #expect(select.attributes.get("db.collection.name") == .string("Note"))
    if case .string(let text) = select.attributes.get("db.query.text") {
      #expect(text.hasPrefix("SELECT "))
    } else {
      Issue.record("the SELECT span has no db.query.text")
    }
  }

  @Test func statementShapesNameTheirOperationAndTable() {
    #expect(StatementTracer.describe(#"SELECT "a", "b" FROM "Note" WHERE "a" = ?1"#) == ("SELECT", "Note"))
    #expect(StatementTracer.describe(#"INSERT INTO "main"."Note" ("a") VALUES (?1)"#) == ("INSERT", "Note"))
    #expect(StatementTracer.describe(#"UPDATE "Note" SET "a" = ?1"#) == ("UPDATE", "Note"))
    #expect(StatementTracer.describe(#"DELETE FROM "Note""#) == ("DELETE", "Note"))
    #expect(
      StatementTracer.describe(#"CREATE TABLE IF NOT EXISTS "Note" ("a" INTEGER)"#) == ("CREATE", "Note"))
    #expect(StatementTracer.describe("COMMIT") == ("COMMIT", nil))
    #expect(StatementTracer.describe("") == ("OTHER", nil))
  }

  @Test func writerStatementsOutsideABatchAreUnderTheirCallsSpan() async throws {
    let folder = try TemporaryFolder()
    let tracer = InMemoryTracer()
    try await withTracer(tracer) {
      let store = try await Store.open(url: "sqlite://" + folder.file("store.sqlite"), registry: .builtIn)
      try await store.prepare(schemas: [Self.schema])
      try await store.close()
    }
    let spans = tracer.finishedSpans
    let prepare = try #require(spans.first { $0.attributes.get("db.operation.name") == .string("prepare") })
    let creates = spans.filter { $0.attributes.get("db.operation.name") == .string("CREATE") }
    #expect(!creates.isEmpty, "the prepare's CREATE TABLE has no span")
    for create in creates {
      #expect(create.parentSpanID == prepare.spanID, "a CREATE span is not under the prepare's span")
      #expect(create.traceID == prepare.traceID)
    }
  }

  @Test func cachedShapesAreTheShapesAndTheCacheStaysBounded() {
    let shapes = StatementShapes()
    let literal = #"ALTER TABLE "Note" ADD COLUMN "a" TEXT NOT NULL DEFAULT 'x'"#
    for _ in 0..<2 {
      let shape = shapes.shape(of: literal)
      #expect(shape.text == StatementLog.shape(of: literal))
      #expect(shape.text.contains("DEFAULT ?"))
      #expect(shape.operation == "ALTER" && shape.collection == "Note")
      #expect(shape.spanName == "ALTER Note")
    }
    // Texts without end (an IN list per id count) do not grow it past its limit.
    for count in 1...(StatementShapes.limit * 2) {
      let list = (1...count).map { "?\($0)" }.joined(separator: ",")
      #expect(shapes.shape(of: #"SELECT "a" FROM "Note" WHERE "a" IN ("# + list + ")").collection == "Note")
    }
    #expect(shapes.count <= StatementShapes.limit)
  }
}
