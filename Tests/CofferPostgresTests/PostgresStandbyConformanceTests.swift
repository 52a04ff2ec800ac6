@_spi(Backend) import Coffer
import CofferConformance
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The conformance suite against a URL whose reads go to standbys: a primary and two
/// asynchronous standbys on loopback, `reads=standby`. Read-your-writes is what lets every
/// check that writes and then reads pass there.
///
/// The whole suite takes minutes more than `make test` can give it on 2 cores, so by default
/// every fourth check runs (the same ones each time, across every group of the suite);
/// `COFFER_TEST_STANDBY_CONFORMANCE=all` — what `make test-standby` sets — runs them all.
@Suite("The conformance suite with reads on standbys", .timeLimit(.minutes(30)))
struct PostgresStandbyConformanceTests {
  @Test("the conformance checks pass (or skip as on one server) with reads=standby and async standbys")
  func conformanceOnStandbyReads() async throws {
    try await StandbyClusters.with([.init(), .init()]) { clusters in
      let folder = try TemporaryFolder("coffer-pg-standby-conformance")
      let child = Bundle.main.bundleURL.appendingPathComponent("coffer").path
      // The suite hands the child process the URL without its password: the child gets this
      // cluster's through the environment, as PGPASSWORD (the test process's own is the shared
      // test server's).
      let program = ConformanceTarget.ChildProgram(
        executable: "/usr/bin/env",
        arguments: ["PGPASSWORD=\(clusters.password)", child, "conformance-child"])
      let target = try await ConformanceTarget(
        url: clusters.url("reads=standby"), registry: .builtIn, directory: folder.path,
        child: FileManager.default.isExecutableFile(atPath: child) ? program : nil)
      var failed: [String] = []
      var skipped = 0
      let started = ContinuousClock.now
      let all = ProcessInfo.processInfo.environment["COFFER_TEST_STANDBY_CONFORMANCE"] == "all"
      let checks = ConformanceSuite.checks.enumerated().filter { all || $0.offset % 4 == 0 }.map(\.element)
      for check in checks {
        let result = await ConformanceSuite.run(check, on: target)
        switch result.outcome {
        case .passed: break
        case .skipped: skipped += 1
        case .failed(let message): failed.append("\(check.id): \(message.prefix(600))")
        }
      }
      print(
        "Conformance with reads=standby: \(checks.count) of \(ConformanceSuite.checks.count) checks, \(failed.count) failed, "
          + "\(skipped) skipped, in \(ContinuousClock.now - started)")
      #expect(failed.isEmpty, "\(failed.joined(separator: "\n"))")
    }
  }
}
