import Coffer
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// Writes to a real, tiny file system so that the disk fills up during a batch.
@Suite(.serialized) struct SQLiteFullDiskTests {
  @Test func aFullDiskFailsTheBatchAndKeepsWhatWasCommitted() async throws {
    let folder = try TemporaryFolder()
    guard let tiny = try SmallFileSystem.mount(in: folder, size: "512k") else {
      print("Skipped: mounting a 512 KiB tmpfs needs root; the full-disk path was not exercised.")
      try Test.cancel("mounting a tmpfs is not permitted here")
    }
    defer { tiny.unmount() }

    let path = tiny.path + "/store.sqlite"
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert((1...5).map(sampleMessage))

    var big = sampleMessage(6)
    big.attachment = Data(repeating: 7, count: 2_000_000)
    await #expect {
      try await store.insert(big)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .storageFull && error?.path == path
        && error?.message.contains("disk is full") == true
    }
    #expect(try await store.query(Message.self).count() == 5)
    #expect(try await store.get(Message.self, id: 6) == nil)
    try await store.insert(sampleMessage(7))
    try await store.close()

    let reopened = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    #expect(try await reopened.query(Message.self).count() == 6)
    try await reopened.close()
  }
}
