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
    let statements = lines.filter { $0.message == "Ran a statement" }
    let shapes = statements.compactMap { $0.metadata["coffer.sql"].map { "\($0)" } }
    #expect(shapes.count == statements.count)
    #expect(shapes.contains { $0.hasPrefix("INSERT") }, "the insert is logged")
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
