import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// `logStatements=on` logs every statement's shape and duration, and never a value.
@Suite struct SQLiteStatementLogTests {
  @Test func logsEveryStatementsShapeAndDurationButNoValue() async throws {
    let folder = try TemporaryFolder()
    let lines = try await StatementLogCheck.run(
      url: "sqlite://\(folder.file("store.sqlite"))?logStatements=on", registry: .builtIn)
    #expect(StatementLogCheck.problems(in: lines) == [])
  }

  @Test func logsNoStatementWithoutTheSwitch() async throws {
    let folder = try TemporaryFolder()
    let lines = try await StatementLogCheck.run(
      url: "sqlite://\(folder.file("store.sqlite"))", registry: .builtIn)
    #expect(!lines.contains { $0.message == "Ran a statement" })
  }

  @Test func refusesAnUnknownSwitchValue() async throws {
    let folder = try TemporaryFolder()
    await #expect(throws: (any Error).self) {
      _ = try await StatementLogCheck.run(
        url: "sqlite://\(folder.file("store.sqlite"))?logStatements=maybe", registry: .builtIn)
    }
  }
}
