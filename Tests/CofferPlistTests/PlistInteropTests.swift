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
