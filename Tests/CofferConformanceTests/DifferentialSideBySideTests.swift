import Coffer
import CofferConformance
import CofferTestSupport
import Foundation
import Testing

/// The differential check on every backend of the build side by side: each step on each
/// backend, each compared with the reference and with the others.
///
/// `make test` runs a short budget; `make differential` a long one, set by
/// `COFFER_DIFFERENTIAL_SEQUENCES`, `COFFER_DIFFERENTIAL_SECONDS`, `COFFER_DIFFERENTIAL_STEPS`,
/// `COFFER_CONFORMANCE_SEED` (the first sequence's seed), `COFFER_DIFFERENTIAL_EXCLUDE` and
/// `COFFER_DIFFERENTIAL_URLS`.
@Suite struct DifferentialSideBySide {
  /// The backends that run side by side: the reopenable, evolving ones, or the store URLs
  /// `COFFER_DIFFERENTIAL_URLS` lists (separated by spaces).
  static let urls =
    ProcessInfo.processInfo.environment["COFFER_DIFFERENTIAL_URLS"].map {
      $0.split(separator: " ").map(String.init)
    }
    ?? ["memory:", "plist:", "plist:?format=xml", "sqlite:", "lmdb:"] + TestServers.storeURLs

  @Test func everyBackendAgreesWithTheReferenceAndTheOthers() async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("coffer-differential-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    var targets: [ConformanceTarget] = []
    for url in Self.urls {
      targets.append(
        try await ConformanceTarget(
          url: url, registry: .forConformanceTests(),
          directory: (directory as NSString).appendingPathComponent(String(targets.count))))
    }
    let budget = DifferentialBudget.fromEnvironment(defaultSeed: 0xD1FF, defaultSequences: 2)
    let verbose = ProcessInfo.processInfo.environment["COFFER_DIFFERENTIAL_VERBOSE"] != nil
    // Written unbuffered, so that the seed a crash interrupted is on record.
    let write: @Sendable (String) -> Void = { FileHandle.standardOutput.write(Data(($0 + "\n").utf8)) }
    let report = await ConformanceSuite.runDifferential(on: targets, budget: budget) { line in
      if verbose || line.contains("DISAGREEMENT") || line.contains("failed") { write(line) }
    }
    write("differential seeds covered: \(report.seeds.map(String.init).joined(separator: " "))")
    write(report.summary)
    for finding in report.findings {
      Issue.record("\(finding.target) disagrees (seed \(finding.seed), \(finding.kind)):\n\(finding.report)")
    }
  }
}
