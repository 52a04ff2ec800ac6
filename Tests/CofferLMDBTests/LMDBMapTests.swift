@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

/// The map grows by itself, up to its maximum; past it a batch fails and says how to raise it.
@Suite struct LMDBMapTests {
  @Test func aSmallMapGrowsToHoldABigBatch() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path, configuration: .init(mapSize: 64 << 10))
    let store = Store(backend: backend)
    try await store.insert((1...5000).map(sampleNote))
    #expect(try await store.query(Note.self).count() == 5000)
    #expect(backend.environment.mapSize > 64 << 10)
    try await store.close()
  }

  @Test func aFullMapAtItsMaximumFailsTheBatchAndKeepsWhatWasCommitted() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path, options: "?mapSize=64KiB&maxMapSize=256KiB")
    var committed = 0
    var failure: CofferError?
    for batch in 0..<100 {
      do {
        try await store.insert((1...100).map { sampleNote(Int64(batch * 100 + $0)) })
        committed += 100
      } catch let error as CofferError {
        failure = error
        break
      }
    }
    let error = try #require(failure)
    #expect(error.code == .storageFull)
    #expect(error.path == folder.path)
    #expect(error.message.contains("lmdb://\(folder.path)?maxMapSize=512KiB"))
    #expect(committed > 0)
    #expect(try await store.query(Note.self).count() == committed)
    try await store.close()

    let larger = try await openStore(folder.path, options: "?maxMapSize=4MiB")
    #expect(try await larger.query(Note.self).count() == committed)
    try await larger.insert((1...100).map { sampleNote(Int64(100_000 + $0)) })
    try await larger.close()
  }
}
