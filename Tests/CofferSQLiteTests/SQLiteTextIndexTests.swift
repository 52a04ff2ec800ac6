@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferSQLite

/// A text index on SQLite is an FTS5 table of Coffer's words with triggers (see
/// `SQLiteTextIndex`): searches read it, and a store that recorded a text index before SQLite
/// had them gets its table when it is prepared.
@Suite struct SQLiteTextIndexTests {
  static let note = try! EntitySchema(
    name: "Note", fields: [Field("id", .int), Field("body", .string, isOptional: true)], idField: "id",
    indexes: [.text(on: "body")])

  func makeStore(_ folder: TemporaryFolder) async throws -> Store {
    let store = Store(backend: try SQLiteBackend(path: folder.file("store.sqlite")))
    try await store.prepare(schemas: [Self.note])
    var changes = ChangeSet()
    for (id, body) in [(1, "Swift concurrency"), (2, "swift swift"), (3, "café au lait")] {
      changes.insert(Row([.int(Int64(id)), .string(body)]), into: "Note")
    }
    try await store.apply(changes)
    return store
  }

  func ranked(_ store: Store, _ query: String) async throws -> [Value] {
    try await store.fetchRows(
      Query(
        entity: "Note", filter: .matches(field: "body", query: query), sort: [.relevance("body")], limit: 10)
    ).map { $0[0] }
  }

  @Test func theIndexHoldsCoffersWordsAndTheSearchReadsIt() async throws {
    let folder = try TemporaryFolder()
    let store = try await makeStore(folder)
    let backend = try #require(store.backend as? SQLiteBackend)
    let matched = try backend.readers.withReader { reader in
      try reader.text(
        #"SELECT group_concat(rowid) FROM "Note/text/body" WHERE "Note/text/body" MATCH '"cafe"'"#)
    }
    #expect(matched == "3")
    #expect(try await ranked(store, "swift") == [.int(2), .int(1)])
  }

  @Test func preparingAStoreWithoutTheFTS5TableMakesIt() async throws {
    let folder = try TemporaryFolder()
    let store = try await makeStore(folder)
    let backend = try #require(store.backend as? SQLiteBackend)
    try backend.withWriter { connection in
      for trigger in ["insert", "delete", "update"] {
        try connection.execute(#"DROP TRIGGER "Note/text/body/\#(trigger)""#)
      }
      try connection.execute(#"DROP TABLE "Note/text/body""#)
    }
    try await store.close()
    let reopened = Store(backend: try SQLiteBackend(path: folder.file("store.sqlite")))
    try await reopened.prepare(schemas: [Self.note])
    #expect(try await ranked(reopened, "swift") == [.int(2), .int(1)])
    #expect(try await ranked(reopened, "caf*") == [.int(3)])
  }
}
