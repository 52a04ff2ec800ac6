import Coffer
import CofferPlist
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Writes to a real, tiny file system so that the disk fills up during a write.
@Suite(.serialized) struct PlistFullDiskTests {
  @Test func aFullDiskFailsTheBatchAndLeavesTheFileAndStoreAsTheyWere() async throws {
    let folder = try TemporaryFolder()
    let mountPoint = folder.file("tiny")
    try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
    guard run("/bin/mount", ["-t", "tmpfs", "-o", "size=96k", "tmpfs", mountPoint]) else {
      print("Skipped: mounting a 96 KiB tmpfs needs root; the full-disk path was not exercised.")
      try Test.cancel("mounting a tmpfs is not permitted here")
    }
    defer { _ = run("/bin/umount", [mountPoint]) }

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
    #expect(try await store.count(Post.self) == 5)
    #expect(try await store.get(Post.self, id: 6) == nil)
    let leftovers = try FileManager.default.contentsOfDirectory(atPath: mountPoint).filter {
      $0.contains(".tmp-")
    }
    #expect(leftovers.isEmpty)
    try await store.close()

    let reopened = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    #expect(try await reopened.count(Post.self) == 5)
    try await reopened.close()
  }

  func run(_ tool: String, _ arguments: [String]) -> Bool {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: tool)
    process.arguments = arguments
    process.standardError = FileHandle.nullDevice
    do {
      try process.run()
      process.waitUntilExit()
      return process.terminationStatus == 0
    } catch {
      return false
    }
  }
}
