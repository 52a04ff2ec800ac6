import Coffer
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

@Suite struct SQLiteCrashTests {
  @Test func aKilledWriterLosesNoCommitThatApplyReturned() async throws {
    try #require(
      FileManager.default.isExecutableFile(atPath: KilledWriter.cofferDev.path),
      "build the coffer-dev executable first")
    let folder = try TemporaryFolder()
    let problems = try await KilledWriter.problems(
      "sqlite://\(folder.file("churn.sqlite"))", rounds: 5, maximumDelay: 80, registry: sqliteRegistry())
    #expect(problems.isEmpty, "\(problems)")
  }
}
