import CLMDB
@_spi(Backend) import Coffer
import CofferMacros
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

/// Files that are not a Coffer LMDB store, or are damaged, are refused with a `CofferError`
/// naming the path, and left as they were.
@Suite struct LMDBBadInputTests {
  func expectRefused(
    _ path: String, code: CofferError.Code = .corruptStore, saying words: String, options: String = ""
  ) async {
    await #expect {
      _ = try await openStore(path, options: options)
    } throws: { error in
      guard let error = error as? CofferError else { return false }
      return error.code == code && error.path?.hasPrefix(path) == true && error.message.contains(words)
    }
  }

  @Test func aFileIsNotAStoreDirectory() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("file")
    try Data("hello".utf8).write(to: URL(fileURLWithPath: path))
    await expectRefused(path, saying: "is a file")
    #expect(FileManager.default.contents(atPath: path) == Data("hello".utf8))
  }

  @Test func aDirectoryOfOtherFilesIsNotAStore() async throws {
    let folder = try TemporaryFolder()
    try Data("x".utf8).write(to: URL(fileURLWithPath: folder.file("notes.txt")))
    await expectRefused(folder.path, saying: "not an LMDB store")
    #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == ["notes.txt"])
  }

  @Test func aDataFileThatIsNotLMDBIsRefusedAndKept() async throws {
    let folder = try TemporaryFolder()
    let junk = Data((0..<16384).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    try junk.write(to: URL(fileURLWithPath: folder.file("data.mdb")))
    await expectRefused(folder.path, saying: "damaged")
    #expect(FileManager.default.contents(atPath: folder.file("data.mdb")) == junk)
  }

  @Test func aDamagedHeaderIsRefusedAndTheFileKept() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert((1...20).map(sampleNote))
    try await store.close()
    let dataPath = folder.file("data.mdb")
    var bytes = try #require(FileManager.default.contents(atPath: dataPath))
    for offset in stride(from: 16, to: 8192, by: 7) { bytes[offset] ^= 0x5A }
    try bytes.write(to: URL(fileURLWithPath: dataPath))
    await expectRefused(folder.path, saying: "damaged")
    #expect(FileManager.default.contents(atPath: dataPath) == bytes)
  }

  @Test func aTruncatedDataFileIsRefused() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert((1...2000).map(sampleNote))
    try await store.close()
    let dataPath = folder.file("data.mdb")
    let bytes = try #require(FileManager.default.contents(atPath: dataPath))
    let cut = bytes.prefix(bytes.count / 2)
    try cut.write(to: URL(fileURLWithPath: dataPath))
    await expectRefused(folder.path, saying: "truncated")
    #expect(FileManager.default.contents(atPath: dataPath) == cut)
  }

  @Test func anEmptiedDataFileIsRefusedAndKept() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert((1...20).map(sampleNote))
    try await store.close()
    let dataPath = folder.file("data.mdb")
    try Data().write(to: URL(fileURLWithPath: dataPath))
    await expectRefused(folder.path, saying: "empty (0 bytes)")
    #expect(FileManager.default.contents(atPath: dataPath) == Data())
  }

  /// Pages allocated and freed again within one transaction (a large value inserted and deleted
  /// in one batch, after a schema evolution) are never written, so the file may end before the
  /// header's last page; the store is sound and opens, while a file cut into pages still in use
  /// is refused.
  @Test func pagesFreedUnwrittenAreNotTruncationButACutIs() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.prepare([Attachment.self])
    try await store.close()
    let again = try await openStore(folder.path)
    try await again.prepare([AttachmentWithNote.self])
    try await again.batch { batch in
      try batch.insert(AttachmentWithNote(id: 1, blob: Data(repeating: 0xA5, count: 70_000), note: nil))
      try batch.delete(AttachmentWithNote.self, id: 1)
    }
    try await again.close()
    let dataPath = folder.file("data.mdb")
    let length = try #require(try FileManager.default.attributesOfItem(atPath: dataPath)[.size] as? Int)
    let environment = try LMDBEnvironment(
      path: folder.path, configuration: .init(), context: StoreContext(name: "test", path: folder.path))
    var info = MDB_envinfo()
    var stat = MDB_stat()
    mdb_env_info(environment.handle, &info)
    mdb_env_stat(environment.handle, &stat)
    environment.close()
    #expect(length < (info.me_last_pgno + 1) * Int(stat.ms_psize), "the batch left its freed pages unwritten")
    let reopened = try await openStore(folder.path)
    #expect(try await reopened.query(AttachmentWithNote.self).count() == 0)
    try await reopened.close()
    let bytes = try #require(FileManager.default.contents(atPath: dataPath))
    let cut = bytes.prefix(3 * Int(stat.ms_psize))
    try cut.write(to: URL(fileURLWithPath: dataPath))
    await expectRefused(folder.path, saying: "truncated")
    #expect(FileManager.default.contents(atPath: dataPath) == cut)
  }

  @Test func anLMDBStoreCofferDidNotMakeIsRefused() async throws {
    let folder = try TemporaryFolder()
    let context = StoreContext(name: "test", path: folder.path)
    let environment = try LMDBEnvironment(path: folder.path, configuration: .init(), context: context)
    try environment.write { transaction in
      let other = try #require(try transaction.open("their-data", flags: MDB_CREATE))
      try transaction.put(other, Array("k".utf8), Array("v".utf8))
    }
    environment.close()
    await expectRefused(folder.path, saying: "did not create")
  }

  @Test func aStoreOfANewerFormatIsRefused() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path)
    try backend.environment.write { transaction in
      try transaction.put(
        backend.catalog, Array("format".utf8), Array(#"{"format":"coffer-lmdb","version":9}"#.utf8))
    }
    try await backend.close()
    await expectRefused(folder.path, saying: "newer Coffer")
  }

  @Test func aRowOfANewerFormatIsAnErrorNamingItsID() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path)
    let store = Store(backend: backend)
    try await store.insert((1...3).map(sampleNote))
    let rows = try backend.handle("Note").rows
    try backend.environment.write { transaction in
      try transaction.put(rows, KeyEncoding.idKey(.int(2)), [RowCodec.version + 1, 0, 0])
    }
    await #expect {
      _ = try await store.get(Note.self, id: 2)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .corruptStore && error?.id == "2" && error?.path == folder.path
        && error?.message.contains("newer Coffer") == true
    }
    #expect(try await store.get(Note.self, id: 3) == sampleNote(3))
    try await store.close()
  }

  @Test func aDamagedRowIsAnErrorAndTheOtherRowsStillRead() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path)
    let store = Store(backend: backend)
    try await store.insert((1...3).map(sampleNote))
    let rows = try backend.handle("Note").rows
    try backend.environment.write { transaction in
      try transaction.put(
        rows, KeyEncoding.idKey(.int(1)), [RowCodec.version, 0, 9, 5, 0xFF, 0xFF, 0xFF, 0x0F])
    }
    await #expect {
      _ = try await store.all(Note.self)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .corruptStore && error?.id == "1" && error?.message.contains("damaged") == true
    }
    #expect(try await store.get(Note.self, ids: [2, 3]) == [sampleNote(2), sampleNote(3)])
    try await store.close()
  }

  @Test func aGarbledLockFileLeftBehindIsReplaced() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert((1...5).map(sampleNote))
    try await store.close()
    try Data(repeating: 0xAB, count: 8192).write(to: URL(fileURLWithPath: folder.file("lock.mdb")))
    let reopened = try await openStore(folder.path)
    #expect(try await reopened.query(Note.self).count() == 5)
    try await reopened.insert(sampleNote(6))
    try await reopened.close()
  }
}

/// An entity holding optional bytes.
@Storable
struct Attachment {
  var id: Int64
  var blob: Data?
}

/// Attachment with a new optional field.
@Storable
struct AttachmentWithNote {
  static var entityName: String { "Attachment" }
  var id: Int64
  var blob: Data?
  var note: String?
}
