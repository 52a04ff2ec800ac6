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
    let statements = lines.filter { $0.message == "Ran a statement" }
    let shapes = statements.compactMap { $0.metadata["coffer.sql"].map { "\($0)" } }
    #expect(shapes.count == statements.count)
    #expect(shapes.contains { $0.contains("INSERT") }, "the insert is logged")
    #expect(shapes.contains { $0.hasPrefix("SELECT") }, "the reads are logged")
    #expect(shapes.contains { $0.contains("CREATE TABLE") }, "the table's creation is logged")
    #expect(shapes.contains("COMMIT"), "the commit is logged")
    for line in statements {
      let milliseconds = line.metadata["coffer.milliseconds"].flatMap { Double("\($0)") }
      #expect(milliseconds.map { $0 >= 0 } == true, "a duration in milliseconds: \(line.text)")
      #expect(line.metadata["coffer.store"] != nil, "the store's name: \(line.text)")
    }
    for line in lines {
      #expect(!line.text.contains(StatementLogCheck.marker), "a value in the log: \(line.text)")
    }
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
