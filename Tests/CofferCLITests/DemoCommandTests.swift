import Foundation
import Testing

@Suite struct DemoCommandTests {
  @Test func demoOnMemoryNarratesEveryStepAndSucceeds() async throws {
    let run = try await CommandRun.coffer(["demo", "--store", "memory:"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Store: memory:"))
    #expect(run.output.contains("chosen by the --store option"))
    #expect(run.output.contains("in memory: the data is not kept"))
    #expect(run.output.contains("Newest page of \"Weekend hike\": 2 of its 4 messages"))
    #expect(run.output.contains("Unread counts: Weekend hike 4, Release planning 3, all threads 7"))
    #expect(run.output.contains("Unread counts now: Weekend hike 0, Release planning 3, all threads 3"))
    #expect(run.output.contains("refused, nothing stored: duplicateID:"))
    #expect(run.output.contains("removed the thread and 3 messages"))
    #expect(run.output.hasSuffix("Done.\n"))
    #expect(run.errorOutput.isEmpty)
  }

  @Test func demoWithoutChoiceUsesTheSQLiteFileDefault() async throws {
    let run = try await CommandRun.coffer(["demo"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Store: sqlite:coffer-demo.sqlite\n"))
    #expect(run.output.contains("chosen by the built-in default"))
    #expect(run.output.contains("durable: the data stays after the demo"))
  }

  @Test func demoTakesTheStoreFromCofferStore() async throws {
    let run = try await CommandRun.coffer(["demo"], environment: ["COFFER_STORE": "memory:from-env"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Store: memory:from-env"))
    #expect(run.output.contains("chosen by the COFFER_STORE environment variable"))
  }

  @Test func demoTakesTheStoreFromAConfigurationFile() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent(
      "coffer-\(UUID().uuidString).json")
    try Data(#"{"coffer": {"store": "memory:from-file"}}"#.utf8).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }

    let run = try await CommandRun.coffer(["demo", "--config", file.path])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Store: memory:from-file"))
    #expect(run.output.contains("chosen by coffer.store in the configuration file \(file.path)"))

    let named = try await CommandRun.coffer(["demo"], environment: ["COFFER_CONFIG": file.path])
    #expect(named.output.contains("Store: memory:from-file"))
  }

  @Test func storeOptionWinsOverCofferStore() async throws {
    let run = try await CommandRun.coffer(
      ["demo", "--store", "memory:from-option"], environment: ["COFFER_STORE": "memory:from-env"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains("Store: memory:from-option"))
  }

  @Test func unknownSchemeFailsWithTheSupportedSchemesOnStandardError() async throws {
    let run = try await CommandRun.coffer(["demo", "--store", "nosuch:///tmp/db"])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("unknownScheme"))
    #expect(run.errorOutput.contains("lmdb:, memory:"))
    #expect(!run.output.contains("Creating threads"))
  }

  @Test func malformedURLFailsWithoutAStackTrace() async throws {
    let run = try await CommandRun.coffer(["demo"], environment: ["COFFER_STORE": "not a url"])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("invalidURL"))
    #expect(run.errorOutput.contains("lmdb:, memory:"))
    #expect(!run.errorOutput.contains("Fatal error"))
    #expect(run.errorOutput.split(separator: "\n").count == 1)
  }
}
