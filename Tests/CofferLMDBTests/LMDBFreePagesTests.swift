import CLMDB
import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

/// The open-time length check reads liblmdb's free-page database itself; what it reads must be
/// what liblmdb's own `mdb_stat -fff` lists, for a free list whose page lists need overflow
/// pages.
@Suite struct LMDBFreePagesTests {
  @Test func theFreePagesReadAreThoseMdbStatLists() async throws {
    guard let tool = mdbStatTool else { try Test.cancel("mdb_stat (apt lmdb-utils) is not installed") }
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    for batch in 0..<4 {
      try await store.insert((1...5_000).map { sampleNote(Int64(batch * 5_000 + $0)) })
    }
    _ = try await store.query(Note.self).filter(FieldRef("thread") != 1).delete()
    try await store.insert((30_001...30_010).map(sampleNote))
    try await store.close()

    let environment = try LMDBEnvironment(
      path: folder.path, configuration: .init(), context: StoreContext(name: "test", path: folder.path))
    var info = MDB_envinfo()
    var stat = MDB_stat()
    mdb_env_stat(environment.handle, &stat)
    let txnid = try environment.read { transaction in
      mdb_env_info(environment.handle, &info)
      return Int(mdb_txn_id(transaction.pointer))
    }
    environment.close()
    guard let file = LMDBPageFile(path: folder.file("data.mdb"), pageSize: Int(stat.ms_psize)) else {
      Issue.record("data.mdb could not be opened")
      return
    }
    let pages = file.freePageNumbers(txnid: txnid, lastPage: info.me_last_pgno)
    let read = try #require(pages)

    let result = try #require(run(tool, ["-fff", folder.path]))
    #expect(result.status == 0)
    var listed = Set<Int>()
    for line in result.output.split(separator: "\n") {
      let text = line.trimmingCharacters(in: .whitespaces)
      let parts = text.split(whereSeparator: { $0 == "[" || $0 == "]" })
      guard !text.isEmpty, text.allSatisfy({ $0.isNumber || $0 == "[" || $0 == "]" }),
        let first = parts.first.flatMap({ Int($0) })
      else { continue }
      let span = parts.count > 1 ? Int(parts[1]) ?? 1 : 1
      for page in first..<first + span { listed.insert(page) }
    }
    #expect(listed.count > 500, "a free list large enough to span several pages")
    #expect(read == listed)
  }
}
