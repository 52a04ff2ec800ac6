import Coffer
import CofferTestSupport
import Foundation
import Testing

@Suite struct LMDBCrashTests {
  @Test func aKilledWriterLosesNoCommitThatApplyReturned() async throws {
    try #require(
      FileManager.default.isExecutableFile(atPath: KilledWriter.cofferDev.path),
      "build the coffer-dev executable first")
    let folder = try TemporaryFolder()
    let problems = try await KilledWriter.problems(
      "lmdb://\(folder.file("churn"))", rounds: 5, maximumDelay: 80, registry: lmdbRegistry())
    #expect(problems.isEmpty, "\(problems)")
  }
}
