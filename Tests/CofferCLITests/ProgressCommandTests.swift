@_spi(Backend) import Coffer
@_spi(Backend) import CofferConformance
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Progress on every long command, as a program reads it: one JSON object a line on standard
/// error with `--progress json`, nothing when standard error is not a terminal and nothing is
/// asked; and `--log-level`/`--log-format` on every command.
@Suite struct ProgressCommandTests {
  /// Ordinary rows of `Every` beside the fixture's extremes: more than one report's worth
  /// (a report every thousand rows), so progress lines come between an entity's first and last.
  static let extra = 2_500
  static var rows: Int { 8 + extra + 9 + 9 }

  private func filled(_ url: String) async throws {
    let store = try await Store.open(url: url)
    try await store.prepare(schemas: EveryKindFixture.schemas)
    try await store.apply(EveryKindFixture.changeSet(extra: Self.extra))
    try await store.close()
  }

  /// The JSON objects of `text`'s lines; fails on a line that is not one.
  private func objects(_ text: String, command: String) throws -> [[String: Any]] {
    try text.split(separator: "\n").map { line in
      let object = try #require(
        (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any],
        "not a JSON object: \(line)")
      #expect(object["command"] as? String == command, "\(line)")
      #expect(object["rowsDone"] is Int && object["seconds"] is Double, "\(line)")
      return object
    }
  }

  /// Checks an export's, import's or verification's lines: every entity appears, each line's
  /// counts only grow, and the last line has done every row.
  private func expectRowProgress(_ objects: [[String: Any]], command: String, totalKnownEarly: Bool) throws {
    #expect(Set(objects.compactMap { $0["entity"] as? String }) == ["Every", "Keyed", "Named"])
    let done = objects.compactMap { $0["rowsDone"] as? Int }
    #expect(done == done.sorted(), "\(command): rowsDone went back: \(done)")
    #expect(
      objects.contains { ($0["entityRowsDone"] as? Int).map { $0 > 0 && $0 < 8 + Self.extra } ?? false },
      "\(command): no line between the first and last of Every")
    if totalKnownEarly {
      #expect(objects.allSatisfy { $0["rows"] as? Int == Self.rows })
    }
    let last = try #require(objects.last)
    #expect(last["rowsDone"] as? Int == Self.rows)
    #expect(last["rows"] as? Int == Self.rows)
  }

  @Test func exportImportAndVerifyWriteProgressAsJSONLines() async throws {
    let folder = try TemporaryFolder("coffer-progress-tools")
    let source = "sqlite://" + folder.file("source.sqlite")
    let target = "lmdb://" + folder.file("target")
    let file = folder.file("export.jsonl")
    try await filled(source)

    let export = try await CommandRun.coffer(["export", source, "-o", file, "--progress", "json"])
    #expect(export.status == 0, "stderr: \(export.errorOutput)")
    // The last line on standard error is the export's summary, not progress.
    var exportLines = export.errorOutput.split(separator: "\n")
    #expect(exportLines.popLast()?.hasPrefix("Exported \(Self.rows) rows") == true)
    try expectRowProgress(
      objects(exportLines.joined(separator: "\n"), command: "export"), command: "export",
      totalKnownEarly: true)

    let imported = try await CommandRun.coffer(["import", target, "-i", file, "--progress", "json"])
    #expect(imported.status == 0, "stderr: \(imported.errorOutput)")
    #expect(imported.output.contains("Imported \(Self.rows) rows"))
    try expectRowProgress(
      objects(imported.errorOutput, command: "import"), command: "import", totalKnownEarly: false)

    let verify = try await CommandRun.coffer(["verify", target, "--progress", "json"])
    #expect(verify.status == 0, "stderr: \(verify.errorOutput)")
    #expect(verify.output.contains("no problems found"))
    try expectRowProgress(
      objects(verify.errorOutput, command: "verify"), command: "verify", totalKnownEarly: true)
  }

  @Test func longCommandsAreQuietWhenStandardErrorIsNotATerminal() async throws {
    let folder = try TemporaryFolder("coffer-progress-quiet")
    let source = "sqlite://" + folder.file("source.sqlite")
    let file = folder.file("export.jsonl")
    try await filled(source)

    let export = try await CommandRun.coffer(["export", source, "-o", file])
    #expect(export.status == 0, "stderr: \(export.errorOutput)")
    #expect(export.errorOutput == "Exported \(Self.rows) rows of 3 entities from \(source).\n")
    let imported = try await CommandRun.coffer(["import", "plist://" + folder.file("t.plist"), "-i", file])
    #expect(imported.status == 0)
    #expect(imported.errorOutput.isEmpty, "\(imported.errorOutput)")
    let verify = try await CommandRun.coffer(["verify", source])
    #expect(verify.status == 0)
    #expect(verify.errorOutput.isEmpty, "\(verify.errorOutput)")
    let sync = try await CommandRun.coffer(["sync", source, "sqlite://" + folder.file("remote.sqlite")])
    #expect(sync.status == 0, "stderr: \(sync.errorOutput)")
    #expect(sync.errorOutput.isEmpty, "\(sync.errorOutput)")
    let json = try await CommandRun.coffer(["verify", source, "--progress", "none"])
    #expect(json.errorOutput.isEmpty)
  }

  @Test func migrateCountsStepsAndSyncCountsRowsAsJSONLines() async throws {
    let folder = try TemporaryFolder("coffer-progress-migrate")
    let url = "sqlite://" + folder.file("store.sqlite")
    try await filled(url)
    let plan = folder.file("plan.json")
    try Data(
      """
      { "steps": [
        { "name": "rename", "renameField": { "entity": "Named", "from": "rank", "to": "score" } },
        { "name": "level", "addField": { "entity": "Keyed", "field": "extra", "kind": "int", "default": 1 } }
      ] }
      """.utf8
    ).write(to: URL(fileURLWithPath: plan))

    let migrate = try await CommandRun.coffer(["migrate", url, "--plan", plan, "--progress", "json"])
    #expect(migrate.status == 0, "stderr: \(migrate.errorOutput) stdout: \(migrate.output)")
    let steps = try objects(migrate.errorOutput, command: "migrate")
    #expect(steps.map { $0["entity"] as? String } == ["rename", "level"])
    #expect(steps.map { $0["stepsDone"] as? Int } == [1, 2])
    #expect(steps.allSatisfy { $0["steps"] as? Int == 2 })

    let sync = try await CommandRun.coffer([
      "sync", url, "sqlite://" + folder.file("remote.sqlite"), "--progress", "json",
    ])
    #expect(sync.status == 0, "stderr: \(sync.errorOutput)")
    let messages = try objects(sync.errorOutput, command: "sync")
    #expect(!messages.isEmpty)
    #expect(messages.allSatisfy { ["push", "pull"].contains($0["entity"] as? String) })
    // The last line counts every row the sync changed, as its summary does.
    let summary = try #require(sync.output.split(separator: "\n").last { $0.hasPrefix("Synced: ") })
    let changed = try #require(Int(summary.dropFirst("Synced: ".count).prefix { $0.isNumber }))
    #expect(changed > Self.rows / 2, "\(summary)")
    #expect(messages.last?["rowsDone"] as? Int == changed)
  }

  @Test func everyCommandTakesTheLogOptionsAndOnlyLongOnesProgress() async throws {
    var commands = [
      "demo", "inspect", "changes", "conformance", "copy", "export", "import", "verify", "migrate", "sync",
    ]
    let long: Set = ["copy", "export", "import", "verify", "migrate", "sync"]
    let all = try await CommandRun.coffer(["--help"])
    if all.output.contains("serve") { commands += ["serve", "ui"] }
    for command in commands {
      let help = try await CommandRun.coffer(["help", command])
      #expect(help.status == 0, "\(command): \(help.errorOutput)")
      #expect(help.output.contains("--log-level <LEVEL>"), "\(command) has no --log-level")
      #expect(help.output.contains("--log-format <FORMAT>"), "\(command) has no --log-format")
      #expect(help.output.contains("--progress <MODE>") == long.contains(command), "\(command): --progress")
    }
  }

  @Test func demoAndConformanceLogTheirStoresAsJSON() async throws {
    let folder = try TemporaryFolder("coffer-log-commands")
    let demo = try await CommandRun.coffer([
      "demo", "--store", "sqlite://" + folder.file("demo.sqlite"), "--log-level", "info", "--log-format",
      "json",
    ])
    #expect(demo.status == 0, "stderr: \(demo.errorOutput)")
    let conformance = try await CommandRun.coffer([
      "conformance", "memory:", "--filter", "values.", "--log-level", "debug", "--log-format", "json",
    ])
    #expect(conformance.status == 0, "stderr: \(conformance.errorOutput)")
    for (name, run) in [("demo", demo), ("conformance", conformance)] {
      let lines = run.errorOutput.split(separator: "\n")
      let objects = lines.compactMap {
        (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any]
      }
      #expect(!objects.isEmpty, "\(name) logged nothing")
      #expect(objects.count == lines.count, "\(name): a line that is not JSON")
      #expect(
        objects.allSatisfy { ($0["metadata"] as? [String: String])?["coffer.store"] != nil },
        "\(name): a line that names no store")
    }
    #expect(demo.errorOutput.contains("Opened the store"))
  }
}
