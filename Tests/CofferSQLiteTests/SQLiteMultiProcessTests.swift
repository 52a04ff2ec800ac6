import Coffer
import CofferConformance
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// The multi-process conformance check, wired end to end for `sqlite:`.
@Suite struct SQLiteMultiProcessTests {
  let checkID = "multiprocess.concurrent-writers-lose-nothing"

  /// The `coffer` executable, built next to the test bundle.
  var coffer: String { Bundle.main.bundleURL.appendingPathComponent("coffer").path }

  @Test func cofferConformanceRunsItselfAsTheSecondProcess() throws {
    try #require(FileManager.default.isExecutableFile(atPath: coffer), "build the coffer executable first")
    let run = try runTool(coffer, ["conformance", "sqlite:", "--filter", checkID])
    #expect(run.status == 0, "\(run.output)\(run.errors)")
    #expect(run.output.contains("1 passed, 0 failed, 0 skipped"), "\(run.output)")
  }

  @Test func withoutAChildProgramTheCheckIsSkippedSayingWhy() async throws {
    let check = try #require(ConformanceSuite.checks.first { $0.id == checkID })
    let folder = try TemporaryFolder()
    let target = try await ConformanceTarget(
      url: "sqlite:", registry: sqliteRegistry(), directory: folder.path)
    let result = await ConformanceSuite.run(check, on: target)
    guard case .skipped(let reason) = result.outcome else {
      Issue.record("expected a skip without a child program, got \(result.outcome)")
      return
    }
    #expect(reason.contains("no child program"))
  }

  @Test func aChildThatFailsFailsTheCheckWithItsOutput() async throws {
    let check = try #require(ConformanceSuite.checks.first { $0.id == checkID })
    let folder = try TemporaryFolder()
    let target = try await ConformanceTarget(
      url: "sqlite:", registry: sqliteRegistry(), directory: folder.path,
      child: .init(executable: "/bin/sh", arguments: ["-c", "echo child broke >&2; exit 3", "sh"]))
    let result = await ConformanceSuite.run(check, on: target)
    guard case .failed(let message) = result.outcome else {
      Issue.record("expected a failure when the child fails, got \(result.outcome)")
      return
    }
    #expect(message.contains("status 3") && message.contains("child broke"), "\(message)")
  }
}
