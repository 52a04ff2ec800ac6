import Coffer
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// The database file is useful on its own: one table per entity, one typed column per field.
@Suite struct SQLiteFileLayoutTests {
  @Test func sqlite3SchemaShowsOneStrictTablePerEntityWithTypedColumns() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = folder.file("chat.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert((1...3).map(sampleMessage))
    try await store.prepare([Tagged.self])
    try await store.close()

    let schema = try runTool("sqlite3", [path, ".schema"])
    #expect(schema.status == 0, "\(schema.errors)")
    let tables = schema.output.split(separator: "\n").filter { $0.hasPrefix("CREATE TABLE") }
    #expect(tables.count == 3, "Message, Tagged and coffer_schema: \(tables)")
    #expect(
      schema.output.contains(
        #"CREATE TABLE IF NOT EXISTS "Message" ("id" INTEGER PRIMARY KEY NOT NULL, "threadID" INTEGER, "sender" TEXT, "#
          + #""text" TEXT, "date" INTEGER, "read" INTEGER, "score" ANY, "attachment" BLOB, "token" BLOB, "#
          + #""tags" TEXT) STRICT;"#), "\(schema.output)")
    #expect(
      schema.output.contains(
        #"CREATE INDEX "Message/index/threadID,date" ON "Message" ("threadID", "date");"#))
    #expect(schema.output.contains(#"CREATE UNIQUE INDEX "Message/unique/token" ON "Message" ("token");"#))
    #expect(
      schema.output.contains(
        #"CREATE TABLE IF NOT EXISTS "Tagged" ("name" TEXT PRIMARY KEY NOT NULL, "count" INTEGER) STRICT, WITHOUT ROWID;"#
      ))
  }

  @Test func sqlite3ReadsValuesInTheirNaturalForm() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = folder.file("chat.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert(sampleMessage(2))
    try await store.close()

    let row = try runTool(
      "sqlite3",
      [path, #"SELECT sender, text, date, read, score, hex(token), tags, typeof(score) FROM "Message""#])
    #expect(
      row.output
        == "user2|message 2 'quoted' %_*|1700000000000002|1|0.5|00000000000000000000000000000002|[\"t2\"]|real\n"
    )
  }

  @Test func namesWithQuotesSpacesAndKeywordsAreQuotedIdentifiers() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = folder.file("odd.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert(Odd(id: "a", value: 1, shout: 2))
    try await store.insert(LowerOdd(id: 1, total: 3))
    try await store.close()

    let tables = try runTool(
      "sqlite3", [path, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"])
    #expect(tables.output.split(separator: "\n").contains("select \"from\"; DROP TABLE x --"))
    #expect(tables.output.split(separator: "\n").contains("Select \"from\"; DROP TABLE x --_2"))
    let columns = try runTool(
      "sqlite3", [path, #"SELECT name FROM pragma_table_info('select "from"; DROP TABLE x --')"#])
    #expect(columns.output == "where\nor 'value'\nOR 'VALUE'_2\n")
    let reopened = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    #expect(try await reopened.get(Odd.self, id: "a") == Odd(id: "a", value: 1, shout: 2))
    #expect(try await reopened.get(LowerOdd.self, id: 1) == LowerOdd(id: 1, total: 3))
    try await reopened.close()
  }

  @Test func aDroppedFieldKeepsItsColumnAndData() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = folder.file("evolve.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert(Tagged(name: "a", count: 4))
    try await store.close()
    let evolved = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await evolved.insert(TaggedWithoutCount(name: "b"))
    try await evolved.close()

    let rows = try runTool("sqlite3", [path, #"SELECT name, count FROM "Tagged" ORDER BY name"#])
    #expect(rows.output == "a|4\nb|\n")
  }
}

/// An entity with a string id.
struct Tagged: Storable, Equatable {
  static var idField: String { "name" }
  var name: String
  var count: Int64
  var id: String { name }
}

/// ``Tagged`` after its count field was dropped.
struct TaggedWithoutCount: Storable, Equatable {
  static var entityName: String { "Tagged" }
  static var idField: String { "name" }
  var name: String
  var id: String { name }
}

/// An entity whose names need quoting, with fields that differ only in case.
struct Odd: Storable, Equatable {
  static var entityName: String { "select \"from\"; DROP TABLE x --" }
  var id: String
  var value: Int64
  var shout: Int64

  enum CodingKeys: String, CodingKey {
    case id = "where"
    case value = "or 'value'"
    case shout = "OR 'VALUE'"
  }
  static var idField: String { "where" }
}

/// An entity whose name differs from ``Odd``'s only in case.
struct LowerOdd: Storable, Equatable {
  static var entityName: String { "Select \"from\"; DROP TABLE x --" }
  var id: Int64
  var total: Int64
}
