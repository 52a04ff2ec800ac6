@_spi(Backend) import Coffer
@_spi(Backend) import CofferPlist
import CofferTestSupport
import Foundation
import Testing

/// `describeStorage` reports the layout's version, the file's size and format; `checkStorage`
/// finds nothing in a sound store and finds a file changed behind the open store's back.
@Suite struct PlistStorageCheckTests {
  /// A store of ten posts, open.
  private func openStore(_ path: String, format: String = "binary", posts: ClosedRange<Int64> = 1...10)
    async throws -> Store
  {
    let store = try await Store.open(url: "plist://\(path)?format=\(format)", registry: plistRegistry())
    try await store.insert(posts.map(samplePost))
    return store
  }

  @Test(arguments: ["binary", "xml"])
  func describesTheFormatVersionSizeAndFormat(format: String) async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.file("posts.plist"), format: format)
    let description = try await #require(store.backend as? any StorageInspecting).describeStorage()
    try await store.close()
    #expect(description.formatVersion == "1")
    #expect((description.bytesOnDisk ?? 0) > 0)
    #expect(description.details.contains(.init("format", format)))
    #expect(description.details.contains(.init("entities", "1")))
  }

  @Test func aSoundStoreHasNoProblems() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.file("posts.plist"))
    try await store.delete(Post.self, id: 4)
    #expect(try await #require(store.backend as? any StorageInspecting).checkStorage() == [])
    try await store.close()
  }

  @Test func unsavedChangesAreNotAProblem() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("posts.plist")
    let store = try await Store.open(url: "plist://\(path)?persist=manual", registry: plistRegistry())
    try await store.insert((1...3).map(samplePost))
    #expect(try await #require(store.backend as? any StorageInspecting).checkStorage() == [])
    try await store.close()
  }

  @Test func findsAFileReplacedByAnotherStore() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("posts.plist")
    let store = try await openStore(path)
    // Another store's file, with fewer posts and one of them changed, copied over this one.
    let otherPath = folder.file("other.plist")
    let other = try await openStore(otherPath, posts: 1...7)
    var changed = samplePost(3)
    changed.text = "changed"
    try await other.update(changed)
    try await other.close()
    try FileManager.default.removeItem(atPath: path)
    try FileManager.default.copyItem(atPath: otherPath, toPath: path)

    let found = try await #require(store.backend as? any StorageInspecting).checkStorage()
    #expect(found.count == 1, "\(found)")
    #expect(
      found.first.map {
        $0.entity == "Post" && $0.message.contains("holds 1 row that the store does not hold")
          && $0.message.contains("lacks 3 rows")
      } == true, "\(found)")
    try await store.close()
  }

  @Test func findsAFileThatNoLongerReads() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("posts.plist")
    let store = try await openStore(path)
    let bytes = try #require(FileManager.default.contents(atPath: path))
    try bytes.prefix(bytes.count / 2).write(to: URL(fileURLWithPath: path))

    let found = try await #require(store.backend as? any StorageInspecting).checkStorage()
    #expect(found.count == 1, "\(found)")
    #expect(found.first?.message.contains("no longer reads") == true, "\(found)")

    try FileManager.default.removeItem(atPath: path)
    let gone = try await #require(store.backend as? any StorageInspecting).checkStorage()
    #expect(gone.first?.message.contains("is gone") == true, "\(gone)")
    try await store.close()
  }
}
