@_spi(Backend) import Coffer
import CofferChildProcess
@_spi(Backend) import CofferConformance
import CofferStores
import CofferTestSupport
import CofferTools
import Foundation
import Testing

/// `coffer inspect`, `copy`, `export`, `import` and `verify`, run as a person runs them, on
/// stores filled with every value kind.
@Suite struct DataToolCommandTests {
  /// Rows of the fixture in a filled store: 8 extremes and `extra` ordinary rows of `Every`,
  /// 9 of `Keyed`, 9 of `Named`.
  static let extra = 500
  static var rows: Int { 8 + extra + 9 + 9 }

  /// Makes a store at `url` holding the fixture, closed again.
  private func filled(_ url: String) async throws -> StoreDigest {
    let store = try await Store.open(url: url)
    try await store.prepare(schemas: EveryKindFixture.schemas)
    try await store.apply(EveryKindFixture.changeSet(extra: Self.extra))
    let digest = try await store.digest()
    try await store.close()
    return digest
  }

  @Test func inspectDescribesEveryEntityAsTextAndJSON() async throws {
    let folder = try TemporaryFolder("coffer-inspect")
    let url = "sqlite://" + folder.file("store.sqlite")
    _ = try await filled(url)

    let run = try await CommandRun.coffer(["inspect", url])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Store: \(url)\n"))
    #expect(run.output.contains("  backend: SQLiteBackend\n"))
    #expect(run.output.contains("  3 entities, \(Self.rows) rows\n"))
    #expect(run.output.contains("Entity Every: \(8 + Self.extra) rows, id id\n"))
    #expect(run.output.contains("  optional date: date?\n"))
    #expect(run.output.contains("  level: int = 3\n"))
    #expect(run.output.contains("  unique (string)\n"))
    #expect(run.output.contains("  index (bool, date)\n"))
    #expect(run.output.contains("Entity Named: 9 rows, id id\n"))

    let json = try await CommandRun.coffer(["inspect", url, "--json"])
    #expect(json.status == 0, "stderr: \(json.errorOutput)")
    let inspection = try JSONDecoder().decode(StoreInspection.self, from: Data(json.output.utf8))
    #expect(inspection.entities.map(\.schema) == EveryKindFixture.schemas)
    #expect(inspection.entities.map(\.rows) == [8 + Self.extra, 9, 9])
    #expect(inspection.capabilities.contains("durable"))
  }

  @Test func copyMovesEveryRowAndSaysItIsVerified() async throws {
    let folder = try TemporaryFolder("coffer-copy")
    let source = "plist://" + folder.file("store.plist")
    let target = "lmdb://" + folder.file("store")
    let expected = try await filled(source)
    let before = try Data(contentsOf: URL(fileURLWithPath: folder.file("store.plist")))

    let run = try await CommandRun.coffer(["copy", source, target, "--batch-size", "100"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Every: \(8 + Self.extra) rows copied\n"))
    #expect(run.output.contains("Copied \(Self.rows) rows in "))
    #expect(
      run.output.contains("Verified: 3 entities, \(Self.rows) rows; every digest matches the source's.\n"))
    // Not a terminal: no progress at all.
    #expect(!run.errorOutput.contains("rows/s"))
    #expect(!run.errorOutput.contains("\u{1B}["))
    #expect(try await digest(of: target) == expected)
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: folder.file("store.plist"))) == before, "the source changed")
  }

  @Test func copyRefusesATargetWithRowsUnlessResuming() async throws {
    let folder = try TemporaryFolder("coffer-copy-refused")
    let source = "sqlite://" + folder.file("source.sqlite")
    let target = "sqlite://" + folder.file("target.sqlite")
    let expected = try await filled(source)
    let first = try await CommandRun.coffer(["copy", source, target])
    #expect(first.status == 0, "stderr: \(first.errorOutput)")

    let again = try await CommandRun.coffer(["copy", source, target])
    #expect(again.status != 0)
    #expect(again.errorOutput.contains("notEmpty: The target already holds rows"))
    #expect(again.errorOutput.contains("--resume"))

    let resumed = try await CommandRun.coffer(["copy", source, target, "--resume"])
    #expect(resumed.status == 0, "stderr: \(resumed.errorOutput)")
    #expect(resumed.output.contains("Every: 0 rows copied, \(8 + Self.extra) already there\n"))
    #expect(resumed.output.contains("Verified: 3 entities"))
    #expect(try await digest(of: target) == expected)
  }

  @Test func copyFromAMissingStoreFailsAndCreatesNothing() async throws {
    let folder = try TemporaryFolder("coffer-copy-missing")
    let run = try await CommandRun.coffer([
      "copy", "sqlite://" + folder.file("nothing.sqlite"), "lmdb://" + folder.file("t"),
    ])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("opening the source"))
    #expect(run.errorOutput.contains("There is no store at this path"))
    #expect(!FileManager.default.fileExists(atPath: folder.file("nothing.sqlite")))
    #expect(!FileManager.default.fileExists(atPath: folder.file("t")))
  }

  @Test func exportThenImportRoundTripsExactly() async throws {
    let folder = try TemporaryFolder("coffer-export")
    let source = "lmdb://" + folder.file("store")
    let target = "sqlite://" + folder.file("copy.sqlite")
    let expected = try await filled(source)
    let file = folder.file("export.jsonl")

    let export = try await CommandRun.coffer(["export", source, "--output", file])
    #expect(export.status == 0, "stderr: \(export.errorOutput)")
    #expect(export.errorOutput.contains("Exported \(Self.rows) rows of 3 entities"))
    let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n")
    let expectedLines: Int = Self.rows + 5
    #expect(lines.count == expectedLines, "opening, 3 headers, the rows, closing")
    #expect(lines.first == #"{"coffer":"export","version":1}"#)
    #expect(lines.contains { $0.contains(#""int":-9223372036854775808"#) })
    #expect(lines.contains { $0.contains(#""double":"-inf""#) })
    #expect(lines.contains { $0.contains(#""double":-0.0"#) })

    let imported = try await CommandRun.coffer(["import", target, "--input", file])
    #expect(imported.status == 0, "stderr: \(imported.errorOutput)")
    #expect(imported.output.contains("Imported \(Self.rows) rows of 3 entities"))
    #expect(try await digest(of: target) == expected)

    // Standard output and standard input work too, one entity at a time; an entity the target
    // already stores with another schema is refused.
    let named = try await CommandRun.coffer(["export", source, "--entity", "Named"])
    #expect(named.status == 0, "stderr: \(named.errorOutput)")
    let namedLines: Int = named.output.split(separator: "\n").count
    #expect(namedLines == 12, "opening, header, 9 rows, closing")
    let piped = "sqlite://" + folder.file("piped.sqlite")
    let fromInput = try await CommandRun.coffer(["import", piped], input: Array(named.output.utf8))
    #expect(fromInput.status == 0, "stderr: \(fromInput.errorOutput)")
    #expect(fromInput.output.contains("Imported 9 rows of 1 entity"))
    let other = try await Store.open(url: "sqlite://" + folder.file("other.sqlite"))
    try await other.prepare(schemas: [
      try EntitySchema(name: "Named", fields: [Field("id", .string), Field("rank", .int)], idField: "id")
    ])
    try await other.close()
    let conflict = try await CommandRun.coffer(
      ["import", "sqlite://" + folder.file("other.sqlite")], input: Array(named.output.utf8))
    #expect(conflict.status != 0)
    #expect(conflict.errorOutput.contains("schemaMismatch: The store holds this entity with another schema"))
  }

  @Test func exportToStandardOutputNamesOnlyTheEntityAsked() async throws {
    let folder = try TemporaryFolder("coffer-export-entity")
    let source = "lmdb://" + folder.file("store")
    _ = try await filled(source)
    let named = try await CommandRun.coffer(["export", source, "--entity", "Named"])
    #expect(named.status == 0, "stderr: \(named.errorOutput)")
    let namedLines: Int = named.output.split(separator: "\n").count
    #expect(namedLines == 12, "opening, header, 9 rows, closing")
  }

  @Test func importOfAMalformedExportNamesTheLineAndKeepsNothing() async throws {
    let folder = try TemporaryFolder("coffer-import-bad")
    // A private store, freed with its last handle (a named one would stay for the process).
    let store = try await Store.open(url: "memory:")
    try await store.prepare(schemas: EveryKindFixture.schemas)
    try await store.apply(EveryKindFixture.changeSet(extra: 20))
    var text = ""
    try await store.exportJSONLines { text += $0 }
    try await store.close()
    var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    lines[5] = String(lines[5].dropLast(3))
    let file = folder.file("bad.jsonl")
    try lines.joined(separator: "\n").write(toFile: file, atomically: true, encoding: .utf8)

    let target = "sqlite://" + folder.file("target.sqlite")
    let run = try await CommandRun.coffer(["import", target, "--input", file])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("invalidInput: Line 6: "), "\(run.errorOutput)")
    let inspect = try await CommandRun.coffer(["inspect", target])
    #expect(inspect.output.contains("  1 entity, 0 rows\n"), "\(inspect.output)")
  }

  @Test func verifyPassesAWholeStoreAndReportsADamagedOne() async throws {
    let folder = try TemporaryFolder("coffer-verify")
    let path = folder.file("store.sqlite")
    _ = try await filled("sqlite://" + path)

    let clean = try await CommandRun.coffer(["verify", "sqlite://" + path])
    #expect(clean.status == 0, "stderr: \(clean.errorOutput)")
    #expect(clean.output.contains("Every: \(8 + Self.extra) rows read, 3 indexes compared\n"))
    #expect(clean.output.contains("no problems found"))

    // Another program drops one of Coffer's indexes behind its back.
    let indexes = try await ChildProcess.run(
      "/usr/bin/env",
      [
        "sqlite3", path,
        #"SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'Every' AND sql IS NOT NULL;"#,
      ])
    let dropped = try #require(indexes.output.split(separator: "\n").first.map(String.init))
    let damage = try await ChildProcess.run("/usr/bin/env", ["sqlite3", path, "DROP INDEX \"\(dropped)\";"])
    try #require(damage.termination.status == 0, "sqlite3: \(damage.errors)")
    let damaged = try await CommandRun.coffer(["verify", "sqlite://" + path])
    #expect(damaged.status == 2, "\(damaged.output) \(damaged.errorOutput)")
    #expect(damaged.output.contains("problem: Every"), "\(damaged.output)")
    #expect(damaged.output.contains("found."), "\(damaged.output)")
  }
}
