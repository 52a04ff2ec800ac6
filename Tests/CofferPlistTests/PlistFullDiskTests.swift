import Coffer
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

/// Writes to a real, tiny file system so that the disk fills up during a write.
@Suite(.serialized) struct PlistFullDiskTests {
  @Test func aFullDiskFailsTheBatchAndLeavesTheFileAndStoreAsTheyWere() async throws {
    try await withTinyDisk { tiny in
      let mountPoint = tiny.path

      let path = mountPoint + "/store.plist"
      let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      try await store.insert((1...5).map(samplePost))
      let before = try #require(FileManager.default.contents(atPath: path))

      var big = samplePost(6)
      big.blob = Data(repeating: 7, count: 200_000)
      await #expect {
        try await store.insert(big)
      } throws: { error in
        let error = error as? CofferError
        return error?.code == .storageFull && error?.path == path
          && error?.message.contains("disk is full") == true
      }
      #expect(FileManager.default.contents(atPath: path) == before)
      #expect(try await store.query(Post.self).count() == 5)
      #expect(try await store.get(Post.self, id: 6) == nil)
      let leftovers = try FileManager.default.contentsOfDirectory(atPath: mountPoint).filter {
        $0.contains(".tmp-")
      }
      #expect(leftovers.isEmpty)
      try await store.close()

      let reopened = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      #expect(try await reopened.query(Post.self).count() == 5)
      try await reopened.close()
    }
  }

  @Test func aCommitThatFilledTheDiskLeavesNothingToWriteAtClose() async throws {
    try await withTinyDisk { tiny in
      let path = tiny.path + "/store.plist"
      let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      try await store.insert((1...5).map(samplePost))
      var big = samplePost(6)
      big.blob = Data(repeating: 7, count: 200_000)
      await #expect(throws: CofferError.self) { try await store.insert(big) }
      // Whatever room is left goes to another file, so any rewrite of the store would fail now.
      fill(tiny.path + "/filler")

      try await store.close()
      let reopened = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      #expect(try await reopened.query(Post.self).count() == 5)
      try await reopened.close()
    }
  }

  @Test func closeReleasesTheLockEvenWhenItsWriteFails() async throws {
    try await withTinyDisk { tiny in
      let path = tiny.path + "/store.plist"
      let store = try await Store.open(url: "plist://\(path)?persist=manual", registry: plistRegistry())
      try await store.insert((1...5).map(samplePost))
      fill(tiny.path + "/filler")

      await #expect {
        try await store.close()
      } throws: { error in
        (error as? CofferError)?.code == .storageFull
      }
      await #expect(throws: CofferError.self) { try await store.query(Post.self).count() }
      try FileManager.default.removeItem(atPath: tiny.path + "/filler")
      let reopened = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
      #expect(try await reopened.query(Post.self).count() == 0)
      try await reopened.close()
    }
  }

  @Test func theLockedErrorDoesNotBlameAnotherProcessAlone() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    await #expect {
      _ = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    } throws: { error in
      guard let error = error as? CofferError, error.code == .locked else { return false }
      return error.message.contains("another handle in this process")
    }
    try await store.close()
  }

  /// Runs `body` with a 96 KiB file system mounted for it, or skips the test (saying why) where
  /// this process may not mount one.
  private func withTinyDisk(_ body: (SmallFileSystem) async throws -> Void) async throws {
    let folder = try TemporaryFolder()
    guard let tiny = try SmallFileSystem.mount(in: folder, size: "96k") else {
      print("Skipped: mounting a 96 KiB tmpfs needs root; the full-disk path was not exercised.")
      try Test.cancel("mounting a tmpfs is not permitted here")
    }
    defer { tiny.unmount() }
    try await body(tiny)
  }

  /// Writes to `path` until the file system is full.
  private func fill(_ path: String) {
    guard
      let handle = FileManager.default.createFile(atPath: path, contents: nil)
        ? FileHandle(forWritingAtPath: path) : nil
    else { return }
    let chunk = Data(repeating: 0, count: 4096)
    while (try? handle.write(contentsOf: chunk)) != nil {}
    try? handle.close()
  }
}
