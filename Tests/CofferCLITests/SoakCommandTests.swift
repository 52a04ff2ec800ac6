import Coffer
import CofferSoak
import CofferStores
import Foundation
import Testing

@Suite struct SoakCommandTests {
  /// A short soak of a durable, multi-process backend with one extra process: transfers commit,
  /// checked reads complete, and no read breaks the invariant.
  @Test(arguments: ["sqlite", "lmdb"])
  func aShortSoakCommitsReadsAndKeepsTheInvariant(scheme: String) async throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
      "coffer-soak-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: folder) }
    let path = folder.appendingPathComponent(scheme == "sqlite" ? "soak.sqlite" : "soak").path
    // Growth is not judged here: three one-second windows of a debug build on a busy machine
    // say nothing about leaks.
    let run = try await CommandRun.cofferDev([
      "soak", "\(scheme)://\(path)", "--seconds", "3", "--window", "1", "--processes", "1", "--writers", "2",
      "--readers", "2", "--growth-limit", "1000",
    ])
    let totals = try #require(
      run.output.split(separator: "\n").first { $0.hasPrefix("  totals: ") }, "stdout: \(run.output)")
    let match = try #require(
      totals.firstMatch(of: /commits (\d+) reads (\d+) retries \d+ exhausted \d+ violations (\d+)/))
    #expect((Int(match.1) ?? 0) > 0, "\(totals)")
    #expect((Int(match.2) ?? 0) > 0, "\(totals)")
    #expect(match.3 == "0", "\(totals)")
    #expect(run.output.contains("in each of 2 processes"))
    #expect(run.output.split(separator: "\n").filter { $0.hasPrefix("window ") }.count == 3)
  }

  @Test func theLedgerAcceptsOnlyEveryAccountSummingToTheTotal() {
    let ledger = SoakLedger.seeded(accounts: 3, balance: 100)
    #expect(ledger.check([100, 100, 100]) == nil)
    #expect(ledger.check([250, -50, 100]) == nil)
    #expect(ledger.check([100, 100, 99]) == .total)
    #expect(ledger.check([100, 100]) == .accountCount(2))
    #expect(ledger.check([Int64.max, Int64.max, 100]) == .total)
  }

  @Test func aChildLineReadsBackAsWritten() {
    let line = SoakChildLine(
      window: 4,
      counts: SoakCounts(
        commits: 12, reads: 34, retries: 5, exhausted: 1, violations: 2, errors: ["io": 3, "locked": 1]),
      resources: SoakResources(residentBytes: 4_096_000, anonymousBytes: 2_048_000, openFiles: 14))
    #expect(SoakChildLine(parsing: line.encoded[...]) == line)
    let end = SoakChildLine(window: nil, counts: SoakCounts(), resources: SoakResources())
    #expect(SoakChildLine(parsing: end.encoded[...]) == end)
    #expect(SoakChildLine(parsing: "committed 12") == nil)
  }

  @Test func theSummaryFailsOnAViolationAndOnGrowthBeyondTheLimit() {
    func window(_ number: Int, rss: Int, fds: Int, mapped: Int = 0) -> SoakWindow {
      SoakWindow(
        number: number, start: Double(number - 1), end: Double(number),
        counts: SoakCounts(commits: 10, reads: 10),
        resources: [SoakResources(residentBytes: rss + mapped, anonymousBytes: rss, openFiles: fds)])
    }
    // Mapped store files (LMDB's map) growing is not judged; anonymous memory is.
    let steady = [window(1, rss: 100, fds: 20, mapped: 10), window(2, rss: 104, fds: 20, mapped: 50)]
    var totals = SoakCounts(commits: 20, reads: 20)
    #expect(
      SoakSummary(windows: steady, totals: totals, growthLimit: 5, processFailures: []).failures.isEmpty)

    totals.violations = 1
    let violated = SoakSummary(windows: steady, totals: totals, growthLimit: 5, processFailures: [])
    #expect(violated.failures == ["1 invariant violations"])
    #expect(violated.rendered(store: "memory:").last?.hasPrefix("  result: FAIL") == true)

    let growing = [window(1, rss: 100, fds: 20), window(2, rss: 100, fds: 22)]
    let grew = SoakSummary(
      windows: growing, totals: SoakCounts(commits: 20, reads: 20), growthLimit: 5, processFailures: [])
    #expect(grew.growth { $0.openFiles }?.percent == 10)
    #expect(grew.failures.count == 1)
    #expect(grew.failures.first?.hasPrefix("open files grew 10.0%") == true)

    let leaking = [window(1, rss: 100, fds: 20), window(2, rss: 106, fds: 20)]
    let leaked = SoakSummary(
      windows: leaking, totals: SoakCounts(commits: 20, reads: 20), growthLimit: 5, processFailures: [])
    #expect(leaked.failures.first?.hasPrefix("anonymous resident memory grew 6.0%") == true)
  }

  @Test func growthIsMeasuredFromTheHighestLevelOfTheWarmUp() {
    func window(_ number: Int, anonymous: Int) -> SoakWindow {
      SoakWindow(
        number: number, start: Double(number - 1), end: Double(number),
        counts: SoakCounts(commits: 10 * number, reads: 10),
        resources: [SoakResources(residentBytes: anonymous, anonymousBytes: anonymous, openFiles: 20)])
    }
    let windows = [window(1, anonymous: 100), window(2, anonymous: 110), window(3, anonymous: 112)]
    let totals = SoakCounts(commits: 60, reads: 30)

    let oneWindow = SoakSummary(windows: windows, totals: totals, growthLimit: 5, processFailures: [])
    #expect(oneWindow.growth { $0.anonymousBytes } == .init(process: 0, first: 100, last: 112))
    #expect(oneWindow.failures.count == 1)
    #expect(oneWindow.rates { $0.commits } == [20, 30])

    let twoWindows = SoakSummary(
      windows: windows, warmUp: 2, totals: totals, growthLimit: 5, processFailures: [])
    #expect(twoWindows.growth { $0.anonymousBytes } == .init(process: 0, first: 110, last: 112))
    #expect(twoWindows.failures.isEmpty)
    #expect(twoWindows.rates { $0.commits } == [30])
    #expect(twoWindows.rendered(store: "memory:").contains { $0.contains("after the 2 warm-up windows") })

    // A figure that only moves within the range the warm-up saw (one connection more or less)
    // has not grown; one that rises above it has.
    let wobbling = [
      window(1, anonymous: 100), window(2, anonymous: 104), window(3, anonymous: 101),
      window(4, anonymous: 104),
    ]
    let steady = SoakSummary(
      windows: wobbling, warmUp: 2, totals: totals, growthLimit: 1, processFailures: [])
    #expect(steady.growth { $0.anonymousBytes } == .init(process: 0, first: 104, last: 104))
    #expect(steady.failures.isEmpty)
    let rising = SoakSummary(
      windows: wobbling + [window(5, anonymous: 110)], warmUp: 2, totals: totals, growthLimit: 5,
      processFailures: [])
    #expect(rising.growth { $0.anonymousBytes } == .init(process: 0, first: 104, last: 110))
    #expect(rising.failures.count == 1)

    let allWindows = SoakSummary(
      windows: windows, warmUp: 3, totals: totals, growthLimit: 5, processFailures: [])
    #expect(allWindows.growth { $0.anonymousBytes } == nil)
    #expect(
      allWindows.rendered(store: "memory:").contains { $0.hasPrefix("  anonymous rss growth: not measured") })
  }
}

@Suite struct HarnessCommandTests {
  /// `coffer` lists only what a user runs; the harness commands are `coffer-dev`'s.
  @Test func soakAndChurnAreCofferDevCommandsNotCoffers() async throws {
    let user = try await CommandRun.coffer(["--help"])
    #expect(user.status == 0)
    #expect(!user.output.contains("soak") && !user.output.contains("churn"), "\(user.output)")
    let moved = try await CommandRun.coffer(["soak", "memory:"])
    #expect(moved.status != 0)
    let harness = try await CommandRun.cofferDev(["--help"])
    #expect(harness.status == 0)
    #expect(harness.output.contains("soak") && harness.output.contains("churn"), "\(harness.output)")
  }
}
