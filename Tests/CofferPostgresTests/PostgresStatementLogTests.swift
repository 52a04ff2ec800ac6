@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// `logStatements=on` logs every statement's shape and how long the server took to answer it,
/// and never a value.
@Suite struct PostgresStatementLogTests {
  @Test func logsEveryStatementsShapeAndDurationButNoValue() async throws {
    let lines = try await linesLogged(logStatements: "on")
    #expect(StatementLogCheck.problems(in: lines) == [])
  }

  @Test func logsNoStatementWithoutTheSwitch() async throws {
    let lines = try await linesLogged(logStatements: nil)
    #expect(!lines.contains { $0.message == "Ran a statement" })
  }

  /// What ``StatementLogCheck`` logs on a scratch schema of the test server, with
  /// `logStatements` set as given; the schema is dropped afterwards.
  private func linesLogged(logStatements: String?) async throws -> [StatementLogCheck.Line] {
    guard let server = TestServers.postgresURL else {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    let base = try StoreURL(server)
    let entry = try BackendRegistry.builtIn.entry(for: base)
    let url = entry.scratchURL(base, "statement-log", UUID().uuidString)
    let text = url.description + (logStatements.map { "&logStatements=\($0)" } ?? "")
    do {
      let lines = try await StatementLogCheck.run(url: text, registry: .builtIn)
      await entry.removeScratch?(url)
      return lines
    } catch {
      await entry.removeScratch?(url)
      throw error
    }
  }
}
