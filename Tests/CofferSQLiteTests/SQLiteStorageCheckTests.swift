@_spi(Backend) import Coffer
@_spi(Backend) import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// `describeStorage` reports the file's format and size; `checkStorage` finds nothing in a
/// sound file and finds damage made behind Coffer's back with the `sqlite3` tool.
@Suite struct SQLiteStorageCheckTests {
  /// A database holding twenty messages (and a few changes), closed.
  private func makeDatabase(_ folder: TemporaryFolder) async throws -> String {
    let path = folder.file("chat.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert((1...20).map(sampleMessage))
    var changed = sampleMessage(4)
    changed.threadID = 9
    try await store.update(changed)
    try await store.delete(Message.self, id: 5)
    try await store.close()
    return path
  }

  /// The problems a backend opened on `path` finds.
  private func problems(_ path: String) async throws -> [IntegrityProblem] {
    let backend = try SQLiteBackend(path: path)
    let problems = try await backend.checkStorage()
    try await backend.close()
    return problems
  }

  /// Runs SQL on the database with the `sqlite3` tool, expecting success.
  private func sqlite3(_ path: String, _ sql: String) throws -> String {
    let run = try runTool("sqlite3", [path, sql])
    #expect(run.status == 0, "sqlite3 failed: \(run.errors)")
    return run.output
  }

  @Test func describesTheFormatVersionSizeAndPages() async throws {
    let folder = try TemporaryFolder()
    let path = try await makeDatabase(folder)
    let backend = try SQLiteBackend(path: path)
    let description = try await backend.describeStorage()
    try await backend.close()
    #expect(description.formatVersion == "1")
    #expect((description.bytesOnDisk ?? 0) > 0)
    let details = Dictionary(description.details.map { ($0.name, $0.value) }, uniquingKeysWith: { $1 })
    #expect(details["journal_mode"] == "wal")
    #expect((details["page_count"].flatMap { Int($0) } ?? 0) > 0)
    #expect(details["page_size"].flatMap { Int($0) } != nil)
    #expect(details["freelist_count"] != nil)
  }

  @Test func aNewDatabaseHasNoFormatYet() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("new.sqlite"))
    let description = try await backend.describeStorage()
    #expect(description.formatVersion == nil)
    #expect(try await backend.checkStorage() == [])
    try await backend.close()
  }

  @Test func aSoundDatabaseHasNoProblems() async throws {
    let folder = try TemporaryFolder()
    let path = try await makeDatabase(folder)
    #expect(try await problems(path) == [])
  }

  @Test func oddNamesAndEvolvedEntitiesHaveNoProblems() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("odd.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert(Odd(id: "a", value: 1, shout: 2))
    try await store.insert(LowerOdd(id: 1, total: 3))
    try await store.insert(Tagged(name: "x", count: 1))
    try await store.prepare([TaggedWithoutCount.self])
    #expect(try await #require(store.backend as? any StorageInspecting).checkStorage() == [])
    try await store.close()
  }

  @Test func findsADroppedIndexAndColumn() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = try await makeDatabase(folder)
    _ = try sqlite3(path, #"DROP INDEX "Message/unique/token"; ALTER TABLE "Message" DROP COLUMN "sender";"#)

    let found = try await problems(path)
    #expect(
      found.contains {
        $0.entity == "Message" && $0.field == "unique:token" && $0.message.contains("missing")
      },
      "\(found)")
    #expect(
      found.contains { $0.entity == "Message" && $0.field == "sender" && $0.message.contains("missing") },
      "\(found)")
    #expect(found.count == 2, "\(found)")
  }

  @Test func findsAChangedColumnType() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = try await makeDatabase(folder)
    // Remake the table with a TEXT threadID, behind Coffer's back.
    let schema = try sqlite3(path, #"SELECT sql FROM sqlite_schema WHERE name = 'Message'"#)
    let changed = schema.replacingOccurrences(of: #""threadID" INTEGER"#, with: #""threadID" TEXT"#)
    try #require(changed != schema)
    _ = try sqlite3(
      path,
      #"PRAGMA writable_schema = ON; UPDATE sqlite_schema SET sql = '"#
        + changed.trimmingCharacters(in: .whitespacesAndNewlines).replacingOccurrences(of: "'", with: "''")
        + #"' WHERE name = 'Message';"#)

    let found = try await problems(path)
    #expect(
      found.contains {
        $0.entity == "Message" && $0.field == "threadID" && $0.message.contains("TEXT")
          && $0.message.contains("INTEGER")
      }, "\(found)")
  }

  @Test func findsAnIndexOutOfStepWithItsTable() async throws {
    try #require(hasSQLiteTool, "the sqlite3 tool is missing; run make deps")
    let folder = try TemporaryFolder()
    let path = try await makeDatabase(folder)
    // Hide the index from SQLite, change rows it covers, then put it back as it was: its
    // entries no longer match the table.
    let index = "Message/index/threadID,date"
    let saved = try sqlite3(path, "SELECT rootpage || '|' || sql FROM sqlite_schema WHERE name = '\(index)'")
    let parts = saved.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|", maxSplits: 1)
    try #require(parts.count == 2, "\(saved)")
    _ = try sqlite3(path, "PRAGMA writable_schema = ON; DELETE FROM sqlite_schema WHERE name = '\(index)';")
    _ = try sqlite3(path, #"UPDATE "Message" SET "threadID" = "threadID" + 100 WHERE "id" <= 3;"#)
    let sql = parts[1].replacingOccurrences(of: "'", with: "''")
    _ = try sqlite3(
      path,
      "PRAGMA writable_schema = ON; INSERT INTO sqlite_schema (type, name, tbl_name, rootpage, sql) "
        + "VALUES ('index', '\(index)', 'Message', \(parts[0]), '\(sql)');")

    let found = try await problems(path)
    #expect(!found.isEmpty)
    #expect(
      found.allSatisfy {
        $0.entity == "Message" && $0.field == "index:threadID,date" && $0.message.contains("integrity check")
      }, "\(found)")
  }
}
