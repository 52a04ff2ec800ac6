import CofferTestSupport
import Foundation
import Testing

@Suite struct GraphDemoTests {
  /// The lines the demo prints after its model-graph heading.
  func graphSection(_ output: String) -> [String] {
    let lines = output.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = lines.firstIndex(where: { $0.hasPrefix("Model graph") }) else { return [] }
    return Array(lines[start...])
  }

  @Test func demoGetsOrCreatesAValueAndReadsTheSameOneAgain() async throws {
    let run = try await CommandRun.coffer(["demo", "--store", "memory:"])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    let lines = graphSection(run.output)
    #expect(lines.contains("G1. Get or create \"ana\": \"Ana\", offline — created with the defaults"))
    #expect(lines.contains("    asked again: the same value; graph holds 1"))
  }

  @Test func demoDiscardsOneScratchGraphAndCommitsAnother() async throws {
    let run = try await CommandRun.coffer(["demo", "--store", "memory:"])
    let lines = graphSection(run.output)
    #expect(lines.contains("G2. Scratch graph renamed her, then was discarded: graph still says \"Ana\""))
    #expect(lines.contains("    Second scratch graph set her online; before commit the graph says offline"))
    #expect(lines.contains("    after commit: online"))
  }

  @Test func demoShowsAVetoedChangeAndUndo() async throws {
    let run = try await CommandRun.coffer(["demo", "--store", "memory:"])
    let lines = graphSection(run.output)
    #expect(lines.contains("G3. Clearing her name was vetoed by a will-change hook: changeVetoed"))
    #expect(lines.contains("    the graph kept \"Ana\""))
    #expect(lines.contains("G4. Undo the commit: status is offline again"))
  }

  @Test func demoPrintsTheEventStreamInOrder() async throws {
    let run = try await CommandRun.coffer(["demo", "--store", "memory:"])
    let lines = graphSection(run.output)
    guard let start = lines.firstIndex(of: "G6. The graph's event stream saw:") else {
      Issue.record("no event section in:\n\(run.output)")
      return
    }
    #expect(
      Array(lines[(start + 1)...].prefix(4)) == [
        "    inserted DemoProfile \"ana\"", "    updated DemoProfile \"ana\" [status]",
        "    updated DemoProfile \"ana\" [status]", "    saved DemoProfile \"ana\"",
      ])
  }

  @Test func demoGivesTheSameGraphOutputOnASecondRunOfADurableStore() async throws {
    // A folder of its own, removed whole: the store leaves a lock file beside its file.
    let folder = try TemporaryFolder("coffer-graph-demo")
    let file = URL(fileURLWithPath: folder.file("store.plist"))
    let first = try await CommandRun.coffer(["demo", "--store", "plist://\(file.path)"])
    let second = try await CommandRun.coffer(["demo", "--store", "plist://\(file.path)"])
    #expect(first.status == 0 && second.status == 0, "stderr: \(first.errorOutput) \(second.errorOutput)")
    #expect(
      graphSection(first.output).contains("G5. Save: 1 inserted in one batch; the store has \"Ana\", offline")
    )
    #expect(graphSection(first.output) == graphSection(second.output))
  }
}
