@_spi(Backend) import Coffer
import CofferPostgres
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Several stores (each with its own connections, as separate processes would be) opening the
/// same new schema at once and preparing the same entity, in the old and the new version: the
/// advisory lock makes them take turns, so every prepare succeeds and the entity ends evolved,
/// with no row lost.
@Suite struct PostgresConcurrentPrepareTests {
  @Test("stores preparing one schema at once take turns and all succeed")
  func concurrentPrepares() async throws {
    guard let server = TestServers.postgresURL else {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    let base = try StoreURL(server)
    let entry = try BackendRegistry.builtIn.entry(for: base)
    let url = entry.scratchURL(base, "concurrent-prepare", UUID().uuidString)
    let v1 = try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    let v2 = try EntitySchema(
      name: "Note",
      fields: [Field("id", .int), Field("text", .string), Field("pinned", .bool, default: .bool(false))],
      idField: "id", indexes: [Index(["pinned"])])
    let results = await withTaskGroup(of: Result<Int, any Error>.self) { group in
      for writer in 0..<6 {
        group.addTask {
          do {
            let store = Store(backend: try await BackendRegistry.builtIn.open(url))
            try await store.prepare(schemas: [writer.isMultiple(of: 2) ? v1 : v2])
            let layout = writer.isMultiple(of: 2) ? v1 : v2
            var row = [Value.int(Int64(writer)), .string("note \(writer)")]
            if layout == v2 { row.append(.bool(true)) }
            try await store.apply(
              ChangeSet([.insert(entity: "Note", row: Row(row))], layouts: ["Note": layout]))
            try await store.close()
            return .success(writer)
          } catch {
            return .failure(error)
          }
        }
      }
      var results: [Result<Int, any Error>] = []
      for await result in group { results.append(result) }
      return results
    }
    for result in results {
      if case .failure(let error) = result { Issue.record("a concurrent prepare failed: \(error)") }
    }
    let store = Store(backend: try await BackendRegistry.builtIn.open(url))
    try await store.prepare(schemas: [v2])
    let rows = try await store.fetchRows(Query(entity: "Note", sort: [Sort("id")]))
    #expect(rows.map { $0[0] } == (0..<6).map { .int(Int64($0)) })
    #expect(rows.allSatisfy { !$0[2].isNull })
    let listed = try await store.storedSchemas()
    #expect(listed.map(\.name) == ["Note"])
    try await store.close()
    await entry.removeScratch?(url)
  }
}
