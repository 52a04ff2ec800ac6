import CofferConformance
import Testing

/// The checks can fail: backends with a deliberate flaw fail the checks about that flaw.
@Suite struct BrokenBackendTests {
  @Test(arguments: [
    "sort.ascending-nulls-first", "differential.random-batches",
  ])
  func nullsLastFails(_ id: String) async throws {
    let result = try await outcome(of: id, on: "broken-nulls-last:")
    guard case .failed = result else {
      Issue.record("\(id) should fail when ascending sorts put nulls last, but gave \(result)")
      return
    }
  }

  @Test(arguments: [
    "batch.duplicate-insert-applies-nothing", "batch.late-failure-undoes-everything",
    "batch.cross-entity-failure-applies-nothing", "batch.update-missing-applies-nothing",
  ])
  func noRollbackFails(_ id: String) async throws {
    let result = try await outcome(of: id, on: "broken-no-rollback:")
    guard case .failed = result else {
      Issue.record("\(id) should fail when a failed batch is not rolled back, but gave \(result)")
      return
    }
  }

  @Test(arguments: ["errors.no-value-in-any-error", "differential.random-batches"])
  func leakyErrorsFail(_ id: String) async throws {
    let result = try await outcome(of: id, on: "broken-leaky-errors:")
    guard case .failed(let message) = result else {
      Issue.record("\(id) should fail when errors quote stored values, but gave \(result)")
      return
    }
    #expect(message.contains("stored value"), "\(message)")
  }

  @Test func unrelatedChecksStillPassOnABrokenBackend() async throws {
    #expect(try await outcome(of: "crud.insert-then-get", on: "broken-no-rollback:") == .passed)
    #expect(try await outcome(of: "filter.in", on: "broken-nulls-last:") == .passed)
  }

  @Test(arguments: ["broken-no-rollback:", "broken-nulls-last:"])
  func differentialReportsSeedAndAShortSequence(_ url: String) async throws {
    let result = try await outcome(of: "differential.random-batches", on: url)
    guard case .failed(let message) = result else {
      Issue.record("the differential check should fail on \(url), but gave \(result)")
      return
    }
    print("differential.random-batches on \(url):\n\(message)")
    // The run starts at seed 12648430; the report names the seed of the sequence that failed
    // and how to replay it.
    let seed = try #require(
      message.firstMatch(of: /seed (\d+); replay with COFFER_CONFORMANCE_SEED=(\d+)/).map { ($0.1, $0.2) })
    #expect(seed.0 == seed.1)
    #expect((12_648_430..<12_648_530).contains(Int(seed.0) ?? 0), "reported seed \(seed.0)")
    let steps = message.split(separator: "\n").filter { $0.hasPrefix("  ") }
    #expect((1...8).contains(steps.count), "shrunk sequence has \(steps.count) steps")
  }
}
