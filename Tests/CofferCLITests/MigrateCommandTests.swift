@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// `coffer migrate`, run as an operator runs it: a rehearsal that changes nothing, the run, a
/// second run that does nothing, the list of recorded steps, and plans it must refuse.
@Suite struct MigrateCommandTests {
  private static let schema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Message",
        fields: [Field("id", .int), Field("body", .string), Field("score", .int, isOptional: true)],
        idField: "id")
    } catch {
      preconditionFailure("fixture schema: \(error)")
    }
  }()

  /// A store at `url` with `count` messages, closed again; its digest.
  private func filled(_ url: String, count: Int) async throws -> StoreDigest {
    let store = try await Store.open(url: url)
    try await store.prepare(schemas: [Self.schema])
    try await store.apply(
      ChangeSet([
        .insertMany(
          entity: "Message",
          rows: RowSource(count: count) { n in
            Row([.int(Int64(n)), .string("message \(n)"), n % 3 == 0 ? .null : .int(Int64(n % 10))])
          })
      ]))
    let digest = try await store.digest()
    try await store.close()
    return digest
  }

  private let plan = """
    { "steps": [
      { "name": "v2-rename", "renameField": { "entity": "Message", "from": "body", "to": "text" } },
      { "name": "v2-pinned", "addField": { "entity": "Message", "field": "pinned", "kind": "bool", "default": false } },
      { "name": "v2-score", "changeKind": { "entity": "Message", "field": "score", "to": "double" } }
    ] }
    """

  @Test(arguments: ["sqlite", "lmdb", "plist"])
  func dryRunReportsAndChangesNothingThenTheRunMigrates(scheme: String) async throws {
    let folder = try TemporaryFolder("coffer-migrate-\(scheme)")
    let url = "\(scheme)://" + folder.file(scheme == "lmdb" ? "store" : "store.\(scheme)")
    let before = try await filled(url, count: 120)
    let planFile = folder.file("plan.json")
    try Data(plan.utf8).write(to: URL(fileURLWithPath: planFile))

    let rehearsal = try await CommandRun.coffer(["migrate", url, "--plan", planFile, "--dry-run"])
    #expect(rehearsal.status == 0, "stderr: \(rehearsal.errorOutput)")
    #expect(
      rehearsal.output.contains(
        "0 v2-rename — rename field 'body' of 'Message' to 'text': would apply, 0 rows\n"))
    #expect(
      rehearsal.output.contains("1 v2-pinned — add field 'pinned' to 'Message': would apply, 120 rows\n"))
    #expect(
      rehearsal.output.contains(
        "2 v2-score — change field 'score' of 'Message' to double: would apply, 120 rows\n"))
    #expect(rehearsal.output.contains(": 3 of 3 steps would apply.\n"))
    #expect(try await digest(of: url) == before, "the rehearsal changed the store")

    let run = try await CommandRun.coffer(["migrate", url, "--plan", planFile])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(
      run.output.contains("2 v2-score — change field 'score' of 'Message' to double: applied, 120 rows\n"))
    #expect(run.output.contains(": 3 of 3 steps applied.\n"))

    let store = try await Store.open(url: url)
    let stored = try await store.storedSchemas()
    #expect(stored.first?.fields.map(\.name) == ["id", "text", "score", "pinned"])
    #expect(stored.first?.field(named: "score")?.kind == .double)
    try await store.prepare(schemas: stored)
    let row = try await store.fetchRows(
      Query(entity: "Message", filter: .compare(field: "id", op: .equal, value: .int(7))))
    #expect(row == [Row([.int(7), .string("message 7"), .double(7), .bool(false)])])
    try await store.close()

    let again = try await CommandRun.coffer(["migrate", url, "--plan", planFile])
    #expect(again.status == 0, "stderr: \(again.errorOutput)")
    #expect(
      again.output.contains("0 v2-rename — rename field 'body' of 'Message' to 'text': already applied\n"))
    #expect(again.output.contains(": 0 of 3 steps applied.\n"))

    let listed = try await CommandRun.coffer(["migrate", url])
    #expect(listed.status == 0, "stderr: \(listed.errorOutput)")
    #expect(listed.output.contains("0 v2-rename: applied "))
    #expect(listed.output.contains(", 120 rows\n"))
  }

  @Test func listingRehearsingAndRerunningLeaveAPropertyListFileAsItIs() async throws {
    let folder = try TemporaryFolder("coffer-migrate-plist-bytes")
    let file = folder.file("store.plist")
    let url = "plist://" + file
    _ = try await filled(url, count: 30)
    let planFile = folder.file("plan.json")
    try Data(plan.utf8).write(to: URL(fileURLWithPath: planFile))
    func bytes() throws -> Data { try Data(contentsOf: URL(fileURLWithPath: file)) }

    let fresh = try bytes()
    #expect(try await CommandRun.coffer(["migrate", url]).status == 0)
    #expect(try bytes() == fresh, "listing the record rewrote the file")
    #expect(try await CommandRun.coffer(["migrate", url, "--plan", planFile, "--dry-run"]).status == 0)
    #expect(try bytes() == fresh, "the rehearsal rewrote the file")

    #expect(try await CommandRun.coffer(["migrate", url, "--plan", planFile]).status == 0)
    let migrated = try bytes()
    #expect(migrated != fresh)
    #expect(try await CommandRun.coffer(["migrate", url, "--plan", planFile]).status == 0)
    #expect(try await CommandRun.coffer(["migrate", url]).status == 0)
    #expect(try bytes() == migrated, "a plan already applied, or the listing, rewrote the file")
  }

  @Test func aFailingStepIsReportedAndTheExitStatusSaysSo() async throws {
    let folder = try TemporaryFolder("coffer-migrate-failing")
    let url = "sqlite://" + folder.file("store.sqlite")
    let before = try await filled(url, count: 10)
    let planFile = folder.file("plan.json")
    let failing = """
      { "steps": [ { "name": "text-to-int", "changeKind": { "entity": "Message", "field": "body", "to": "int" } } ] }
      """
    try Data(failing.utf8).write(to: URL(fileURLWithPath: planFile))

    let rehearsal = try await CommandRun.coffer(["migrate", url, "--plan", planFile, "--dry-run"])
    #expect(rehearsal.status == 2)
    #expect(
      rehearsal.output.contains(
        "0 text-to-int — change field 'body' of 'Message' to int: failed (migrationFailed): "))
    #expect(!rehearsal.output.contains("message 1"), "a value was shown")

    let run = try await CommandRun.coffer(["migrate", url, "--plan", planFile])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("migrationFailed"))
    #expect(try await digest(of: url) == before)
  }

  @Test func malformedPlansAreRefusedBeforeTheStoreIsOpened() async throws {
    let folder = try TemporaryFolder("coffer-migrate-bad-plan")
    let planFile = folder.file("plan.json")
    for (text, expected) in [
      (#"{ "steps": [ { "name": "x" } ] }"#, "Migration step 0 ('x') names no kind of step"),
      (
        #"{ "steps": [ { "name": "x", "addField": { "entity": "M", "field": "f", "kind": "int" } } ] }"#,
        "adds a required field without a default"
      ),
      (#"{ "stepz": [] }"#, "lacks 'steps'"),
    ] {
      try Data(text.utf8).write(to: URL(fileURLWithPath: planFile))
      let run = try await CommandRun.coffer(["migrate", "memory:", "--plan", planFile])
      #expect(run.status != 0)
      #expect(run.errorOutput.contains(expected), "stderr: \(run.errorOutput)")
    }
  }
}
