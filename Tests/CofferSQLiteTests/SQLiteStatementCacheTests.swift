@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferSQLite

/// A connection's statements for tables' fixed operations are compiled once per table version:
/// evolving an entity drops the statements of its earlier table, so they do not pile up.
@Suite struct SQLiteStatementCacheTests {
  @Test func evolvingAnEntityLeavesNoStatementsBehind() async throws {
    let folder = try TemporaryFolder()
    let backend = try SQLiteBackend(path: folder.file("store.sqlite"))
    for version in 1...20 {
      let extra = (1...version).map { Field("f\($0)", .int, isOptional: true) }
      let schema = try EntitySchema(name: "T", fields: [Field("id", .int)] + extra, idField: "id")
      try await backend.prepare([schema])
      var changes = ChangeSet()
      changes.insert(Row([.int(Int64(version))] + extra.map { _ in .int(1) }), into: "T")
      changes.update(Row([.int(Int64(version))] + extra.map { _ in .int(2) }), in: "T")
      _ = try await backend.apply(changes)
    }
    let cached = try backend.withWriter { $0.tableStatementCount }
    #expect(cached <= SQLiteTable.Operation.allCases.count, "statements of one table version at most")
    try await backend.close()
  }
}
