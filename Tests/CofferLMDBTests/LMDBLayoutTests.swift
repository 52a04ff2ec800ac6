import Coffer
import CofferTestSupport
import Foundation
import Testing

/// The store's layout as liblmdb's own tools see it.
@Suite struct LMDBLayoutTests {
  struct Tag: Storable, Equatable {
    var id: String
    var count: Int64
  }

  @Test func mdbStatListsOneDatabasePerEntityAndIndex() async throws {
    guard let tool = mdbStatTool else { try Test.cancel("mdb_stat (apt lmdb-utils) is not installed") }
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert((1...10).map(sampleNote))
    try await store.insert(Tag(id: "a", count: 1))
    let result = try #require(run(tool, ["-a", folder.path]))
    try await store.close()
    #expect(result.status == 0)
    let databases = result.output.split(separator: "\n").compactMap { line -> String? in
      guard line.hasPrefix("Status of "), line != "Status of Main DB" else { return nil }
      return String(line.dropFirst("Status of ".count))
    }
    #expect(
      Set(databases) == [
        "coffer", "rows:Note", "index:Note:thread,date", "unique:Note:handle", "index:Note:score", "rows:Tag",
      ])
    #expect(result.output.contains("Entries: 10"))
  }
}
