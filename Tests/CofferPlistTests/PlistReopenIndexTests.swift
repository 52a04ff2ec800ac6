import Coffer
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

/// A message with an equality lookup (on `thread`) and a unique index (on `token`), to check
/// that both are rebuilt when a store is opened.
struct IndexedNote: Storable, Equatable {
  var id: Int64
  var thread: Int64
  var token: String
  var text: String

  static var indexes: [Index] { [.on("thread"), .unique("token")] }
}

@Suite struct PlistReopenIndexTests {
  func notes(_ count: Int64) -> [IndexedNote] {
    (1...count).map { IndexedNote(id: $0, thread: $0 % 7, token: "t\($0)", text: "note \($0)") }
  }

  @Test(arguments: PlistBackend.Format.allCases)
  func lookupsAndUniqueIndexesAreRebuiltOnOpen(format: PlistBackend.Format) async throws {
    let folder = try TemporaryFolder()
    let url = "plist://\(folder.file("store.plist"))?format=\(format.rawValue)"
    var store = try await Store.open(url: url, registry: plistRegistry())
    let all = notes(300)
    try await store.insert(all)
    try await store.close()

    store = try await Store.open(url: url, registry: plistRegistry())
    for thread in Int64(0)..<7 {
      let found = try await store.query(IndexedNote.self).filter(FieldRef("thread") == thread).fetch()
      #expect(Set(found.map(\.id)) == Set(all.filter { $0.thread == thread }.map(\.id)))
    }
    let inThreads = try await store.query(IndexedNote.self).filter(.isIn("thread", [.int(2), .int(5)]))
      .fetch()
    #expect(inThreads.count == all.filter { $0.thread == 2 || $0.thread == 5 }.count)
    await #expect(throws: CofferError.self) {
      try await store.insert(IndexedNote(id: 1000, thread: 1, token: "t42", text: "clash"))
    }
    try await store.update(IndexedNote(id: 42, thread: 3, token: "t42", text: "moved"))
    #expect(
      try await store.query(IndexedNote.self).filter(FieldRef("thread") == Int64(0)).fetch().contains {
        $0.id == 42
      } == false)
    #expect(
      try await store.query(IndexedNote.self).filter(FieldRef("thread") == Int64(3)).fetch().contains {
        $0.id == 42
      })
    try await store.close()
  }

  @Test(arguments: PlistBackend.Format.allCases)
  func aFileWithTwoRowsOfOneIDFailsToOpenAndIsKept(format: PlistBackend.Format) async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let url = "plist://\(path)?format=\(format.rawValue)"
    let store = try await Store.open(url: url, registry: plistRegistry())
    try await store.insert(notes(3))
    try await store.close()
    _ = try python(
      """
      import plistlib, sys
      path, fmt = sys.argv[1], sys.argv[2]
      store = plistlib.load(open(path, 'rb'))
      rows = store['entities']['IndexedNote']
      rows.append(dict(next(row for row in rows if row['id'] == 2), token='other'))
      plistlib.dump(store, open(path, 'wb'), fmt=plistlib.FMT_BINARY if fmt == 'binary' else plistlib.FMT_XML)
      """, [path, format.rawValue])
    let before = FileManager.default.contents(atPath: path)
    do {
      let backend = try PlistBackend(path: path)
      try await backend.close()
      Issue.record("opening a file with a repeated id should fail")
    } catch let error as CofferError {
      #expect(error.code == .duplicateID)
      #expect(error.id == "2")
    }
    #expect(FileManager.default.contents(atPath: path) == before)
  }

  @Test func aFileBreakingAUniqueIndexFailsToOpen() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(url: "plist://\(path)?format=xml", registry: plistRegistry())
    try await store.insert(notes(3))
    try await store.close()
    _ = try python(
      """
      import plistlib, sys
      store = plistlib.load(open(sys.argv[1], 'rb'))
      next(row for row in store['entities']['IndexedNote'] if row['id'] == 3)['token'] = 't1'
      plistlib.dump(store, open(sys.argv[1], 'wb'), sort_keys=False)
      """, [path])
    do {
      let backend = try PlistBackend(path: path)
      try await backend.close()
      Issue.record("opening a file that breaks a unique index should fail")
    } catch let error as CofferError {
      #expect(error.code == .uniqueViolation)
    }
  }
}
