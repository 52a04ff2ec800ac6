import Foundation
import Testing

@Suite struct ConformanceCommandTests {
  @Test func memoryPassesEveryCheckAndTheSummaryCountsThem() async throws {
    let run = try await CommandRun.coffer(["conformance", "memory:"])
    #expect(run.status == 0, "stdout: \(run.output)\nstderr: \(run.errorOutput)")
    let lines = run.output.split(separator: "\n")
    #expect(lines.first?.hasPrefix("check") == true)
    #expect(lines.first?.hasSuffix("memory:") == true)
    #expect(!run.output.contains("FAIL"))
    let summary = try #require(lines.last)
    #expect(summary.contains(" passed, 0 failed, "))
    #expect(summary.wholeMatch(of: /\d+ passed, \d+ failed, \d+ skipped/) != nil)
  }

  @Test func oneColumnPerStoreAndOnlyTheFilteredChecks() async throws {
    let run = try await CommandRun.coffer(["conformance", "memory:", "memory:second", "--filter", "crud."])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    let lines = run.output.split(separator: "\n")
    #expect(lines.first?.hasSuffix("memory:  memory:second") == true)
    let rows = lines.dropFirst().prefix { !$0.isEmpty && !$0.contains(" passed, ") }
    #expect(!rows.isEmpty)
    #expect(rows.allSatisfy { $0.hasPrefix("crud.") && $0.hasSuffix("pass     pass") })
    #expect(lines.last == "\(rows.count * 2) passed, 0 failed, 0 skipped")
  }

  @Test func listPrintsTheChecksAsMarkdown() async throws {
    let run = try await CommandRun.coffer(["conformance", "--list"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.hasPrefix("# Conformance checks"))
    #expect(run.output.contains("| id | rule | requires |"))
    #expect(run.output.contains("`crud."))
  }

  @Test func docsConformanceIsExactlyWhatListPrints() async throws {
    let run = try await CommandRun.coffer(["conformance", "--list"])
    let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Docs/Conformance.md")
    let written = try String(contentsOf: docs, encoding: .utf8)
    #expect(written == run.output, "Docs/Conformance.md is stale: run 'make docs'")
  }

  @Test func anUnknownSchemeFailsOnStandardError() async throws {
    let run = try await CommandRun.coffer(["conformance", "nosuch:db"])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("unknownScheme"))
    #expect(run.errorOutput.contains("lmdb:, memory:"))
    #expect(run.output.isEmpty)
  }

  @Test func aFilterThatMatchesNothingFails() async throws {
    let run = try await CommandRun.coffer(["conformance", "memory:", "--filter", "no-such-check"])
    #expect(run.status != 0)
    #expect(run.errorOutput.contains("no check id contains 'no-such-check'"))
  }
}
