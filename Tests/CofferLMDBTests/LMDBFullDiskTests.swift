import Coffer
import CofferTestSupport
import Foundation
import Testing

/// Writes to a real, tiny file system so that the disk fills up during a commit.
@Suite(.serialized) struct LMDBFullDiskTests {
  @Test func aFullDiskFailsTheBatchAndKeepsWhatWasCommitted() async throws {
    let folder = try TemporaryFolder()
    guard let tiny = try SmallFileSystem.mount(in: folder, size: "256k") else {
      print("Skipped: mounting a 256 KiB tmpfs needs root; the full-disk path was not exercised.")
      try Test.cancel("mounting a tmpfs is not permitted here")
    }
    defer { tiny.unmount() }

    let path = tiny.path + "/store"
    let store = try await openStore(path)
    try await store.insert((1...20).map(sampleNote))
    var big = (21...40).map(sampleNote)
    for index in big.indices { big[index].blob = Data(repeating: 7, count: 20_000) }
    await #expect {
      try await store.insert(big)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .storageFull && error?.path == path
        && error?.message.contains("disk is full") == true
    }
    #expect(try await store.query(Note.self).count() == 20)
    #expect(try await store.get(Note.self, id: 21) == nil)
    try await store.close()

    let reopened = try await openStore(path)
    #expect(try await reopened.all(Note.self) == (1...20).map(sampleNote))
    try await reopened.close()
  }
}
