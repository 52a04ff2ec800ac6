@_spi(Backend) import Coffer
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

@Suite struct PlistPersistenceTests {
  func contents(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

  /// Reads the store file as another program would, without opening (and locking) it.
  func idsOnDisk(_ path: String) throws -> [Int] {
    let printed = try python(
      "import plistlib, sys; print(sorted(r['id'] for r in plistlib.load(open(sys.argv[1], 'rb'))['entities'].get('Post', [])))",
      [path])
    return printed.trimmingCharacters(in: .whitespacesAndNewlines).dropFirst().dropLast().split(
      separator: ","
    )
    .compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
  }

  @Test func immediateWritesEveryBatchBeforeApplyReturns() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    try await store.insert(samplePost(1))
    #expect(try idsOnDisk(path) == [1])
    try await store.insert([samplePost(2), samplePost(3)])
    #expect(try idsOnDisk(path) == [1, 2, 3])
    try await store.delete(Post.self, id: 2)
    #expect(try idsOnDisk(path) == [1, 3])
    try await store.close()
  }

  @Test func aFailedBatchLeavesTheFileUnchanged() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    try await store.insert(samplePost(1))
    let before = contents(path)
    await #expect(throws: CofferError.self) { try await store.insert([samplePost(2), samplePost(1)]) }
    #expect(contents(path) == before)
    try await store.close()
  }

  @Test func manualWritesOnlyOnPersistAndClose() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let backend = try PlistBackend(path: path, configuration: .init(persistence: .manual))
    #expect(!backend.capabilities.contains(.durable))
    let store = Store(backend: backend)
    try await store.insert(samplePost(1))
    #expect(try idsOnDisk(path) == [])
    try await backend.persist()
    #expect(try idsOnDisk(path) == [1])
    try await store.insert(samplePost(2))
    #expect(try idsOnDisk(path) == [1])
    try await store.close()
    #expect(try idsOnDisk(path) == [1, 2])
  }

  @Test func everyNChangesWritesOnTheNthOperation() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(url: "plist://\(path)?persist=every:3", registry: plistRegistry())
    try await store.insert(samplePost(1))
    try await store.insert(samplePost(2))
    #expect(try idsOnDisk(path) == [])
    try await store.insert(samplePost(3))
    #expect(try idsOnDisk(path) == [1, 2, 3])
    try await store.insert(samplePost(4))
    #expect(try idsOnDisk(path) == [1, 2, 3])
    try await store.close()
    #expect(try idsOnDisk(path) == [1, 2, 3, 4])
  }

  @Test func intervalWritesInTheBackgroundAfterTheDelay() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(url: "plist://\(path)?persist=interval:1.5", registry: plistRegistry())
    let start = ContinuousClock.now
    try await store.insert(samplePost(1))
    let nothingYet = try idsOnDisk(path) == []
    // On a machine so busy (the whole suite runs in parallel) that the delay passed during the
    // insert, the file may rightly hold the row already.
    if ContinuousClock.now - start < .seconds(1) { #expect(nothingYet) }
    var written = false
    for _ in 0..<100 where !written {
      try await Task.sleep(for: .milliseconds(100))
      written = try idsOnDisk(path) == [1]
    }
    #expect(written, "the change should reach the file within 10 seconds")
    try await store.close()
  }

  @Test func closedStoresRefuseWorkAndClosingTwiceIsHarmless() async throws {
    let folder = try TemporaryFolder()
    let store = try await Store.open(url: "plist://\(folder.file("s.plist"))", registry: plistRegistry())
    try await store.insert(samplePost(1))
    try await store.close()
    try await store.close()
    await #expect { try await store.get(Post.self, id: 1) } throws: { ($0 as? CofferError)?.code == .closed }
  }
}
