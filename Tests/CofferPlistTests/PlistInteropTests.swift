import Coffer
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

@Suite struct PlistInteropTests {
  @Test(arguments: PlistBackend.Format.allCases)
  func pythonPlistlibReadsTheValuesCofferWrote(format: PlistBackend.Format) async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let store = try await Store.open(
      url: "plist://\(path)?format=\(format.rawValue)", registry: plistRegistry())
    try await store.insert([samplePost(1), samplePost(2)])
    try await store.close()

    let printed = try python(
      """
      import plistlib, sys, json
      store = plistlib.load(open(sys.argv[1], 'rb'))
      rows = sorted(store['entities']['Post'], key=lambda row: row['id'])
      for row in rows:
          print(json.dumps({k: (v.hex() if isinstance(v, bytes) else v) for k, v in sorted(row.items())}, ensure_ascii=False))
      print(store['CofferStore']['format'], store['CofferStore']['version'])
      print([f['name'] for f in store['schemas']['Post']['fields']])
      """, [path])
    let lines = printed.split(separator: "\n").map(String.init)
    #expect(
      lines[0]
        == #"{"blob": "0100", "date": 1700000000000001, "id": 1, "score": 0.25, "tags": "[\"t1\"]", "text": "post 1 <&> ü", "thread": 1, "token": "00000000-0000-0000-0000-000000000001"}"#
    )
    #expect(lines[1].contains(#""read": true"#))
    #expect(lines[2] == "coffer-plist 1")
    #expect(lines[3] == "['id', 'thread', 'text', 'date', 'read', 'score', 'blob', 'token', 'tags']")
  }

  @Test(arguments: PlistBackend.Format.allCases)
  func aRowAddedWithPlistlibLoadsInCoffer(format: PlistBackend.Format) async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let url = "plist://\(path)?format=\(format.rawValue)"
    var store = try await Store.open(url: url, registry: plistRegistry())
    try await store.insert(samplePost(1))
    try await store.close()

    _ = try python(
      """
      import plistlib, sys
      path, fmt = sys.argv[1], sys.argv[2]
      store = plistlib.load(open(path, 'rb'))
      store['entities']['Post'].append({'id': 99, 'thread': 7, 'text': 'from python', 'date': 1000000,
          'score': 1.5, 'blob': b'\\x00\\xff', 'token': '00000000-0000-0000-0000-000000000099', 'tags': '["py"]'})
      plistlib.dump(store, open(path, 'wb'), fmt=plistlib.FMT_BINARY if fmt == 'binary' else plistlib.FMT_XML)
      """, [path, format.rawValue])

    store = try await Store.open(url: url, registry: plistRegistry())
    let added = try #require(try await store.get(Post.self, id: 99))
    #expect(added.text == "from python")
    #expect(added.read == nil)
    #expect(added.date == Date(timeIntervalSince1970: 1))
    #expect(added.blob == Data([0, 255]))
    #expect(added.tags == ["py"])
    #expect(try await store.get(Post.self, id: 1) == samplePost(1))
    try await store.close()
  }

  /// The file is written in pieces of about a megabyte: a store of several pieces, with null
  /// fields, long ASCII and UTF-16 strings and one value larger than a piece, read back whole by
  /// plistlib (which checks every offset and reference) and by Coffer, after the bulk insert and
  /// after a commit that takes most rows from the writer's cache.
  @Test(arguments: PlistBackend.Format.allCases)
  func aFileWrittenInManyPiecesReadsBackWhole(format: PlistBackend.Format) async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let url = "plist://\(path)?format=\(format.rawValue)"
    var posts = (1...3000).map { id in
      var post = samplePost(Int64(id))
      post.text = String(repeating: id % 2 == 0 ? "é" : "x", count: 10 + id % 700)
      return post
    }
    posts[10].blob = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
    let program = """
      import plistlib, sys
      rows = plistlib.load(open(sys.argv[1], 'rb'))['entities']['Post']
      print(len(rows), sum(len(r['text']) for r in rows), sum(1 for r in rows if 'read' not in r),
            max(len(r['blob']) for r in rows))
      """
    func expected() -> String {
      "\(posts.count) \(posts.reduce(0) { $0 + $1.text.count }) \(posts.filter { $0.read == nil }.count) 1500000"
    }

    var store = try await Store.open(url: url, registry: plistRegistry())
    try await store.insert(posts)
    try await store.close()
    #expect(try python(program, [path]).trimmingCharacters(in: .whitespacesAndNewlines) == expected())
    store = try await Store.open(url: url, registry: plistRegistry())
    #expect(try await store.all(Post.self) == posts)

    for index in [0, 11, 1500, 2999] {
      posts[index].read = posts[index].read == nil ? false : nil
      posts[index].text += " — changed"
    }
    let changed = [posts[0], posts[11], posts[1500], posts[2999]]
    try await store.batch { batch in
      for post in changed { try batch.update(post) }
    }
    try await store.close()
    #expect(try python(program, [path]).trimmingCharacters(in: .whitespacesAndNewlines) == expected())
    store = try await Store.open(url: url, registry: plistRegistry())
    #expect(try await store.all(Post.self) == posts)
    try await store.close()
  }

  @Test func formatIsDetectedOnOpenAndConvertedWhenAnotherIsAskedFor() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    var store = try await Store.open(url: "plist://\(path)?format=xml", registry: plistRegistry())
    try await store.insert(samplePost(5))
    try await store.close()
    #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("<?xml"))

    store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    try await store.upsert(samplePost(6))
    try await store.close()
    #expect(try String(contentsOfFile: path, encoding: .utf8).hasPrefix("<?xml"))

    store = try await Store.open(url: "plist://\(path)?format=binary", registry: plistRegistry())
    #expect(try await store.query(Post.self).count() == 2)
    try await store.close()
    #expect(try Data(contentsOf: URL(fileURLWithPath: path)).starts(with: Array("bplist00".utf8)))
  }
}
