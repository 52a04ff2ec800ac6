@_spi(Backend) import Coffer
import CofferPlist
import CofferTestSupport
import Foundation
import Testing

@Suite struct PlistBadInputTests {
  /// Opens a file that must fail, and checks the error and that the file was not touched.
  func expectOpenFails(_ path: String, code: CofferError.Code, mentioning words: [String]) async throws {
    let before = FileManager.default.contents(atPath: path)
    do {
      let backend = try PlistBackend(path: path)
      try await backend.close()
      Issue.record("opening \(path) should have failed")
    } catch let error as CofferError {
      #expect(error.code == code, "\(error)")
      #expect(error.path == path)
      for word in words { #expect(error.message.contains(word), "\(error.message) should mention \(word)") }
    }
    #expect(FileManager.default.contents(atPath: path) == before, "the file must be left as it was")
  }

  func writeStore(_ path: String, format: PlistBackend.Format, rows: Int) async throws {
    let store = try await Store.open(
      url: "plist://\(path)?format=\(format.rawValue)", registry: plistRegistry())
    try await store.insert((1...Int64(rows)).map(samplePost))
    try await store.close()
  }

  @Test(arguments: PlistBackend.Format.allCases)
  func aTruncatedFileIsReportedAndKept(format: PlistBackend.Format) async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    try await writeStore(path, format: format, rows: 50)
    let data = try Data(contentsOf: URL(fileURLWithPath: path))
    try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: path))
    try await expectOpenFails(path, code: .corruptStore, mentioning: ["damaged or truncated", "backup"])
  }

  @Test func anEmptyFileIsReportedAndKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    #expect(FileManager.default.createFile(atPath: path, contents: Data()))
    try await expectOpenFails(path, code: .corruptStore, mentioning: ["empty"])
  }

  @Test func aDirectoryInPlaceOfTheStoreFileIsReported() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
    try await expectOpenFails(path, code: .io, mentioning: [path, "readable file"])
    var isDirectory: ObjCBool = false
    #expect(FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) && isDirectory.boolValue)
  }

  @Test func aFileThatIsNotAPlistIsReportedAndKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("notes.plist")
    try Data("name,age\nann,3\n".utf8).write(to: URL(fileURLWithPath: path))
    try await expectOpenFails(path, code: .corruptStore, mentioning: ["not a property list"])
  }

  @Test func aPlistThatIsNotACofferStoreIsReportedAndKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("settings.plist")
    _ = try python("import plistlib, sys; plistlib.dump({'theme': 'dark'}, open(sys.argv[1], 'wb'))", [path])
    try await expectOpenFails(path, code: .corruptStore, mentioning: ["not a Coffer store"])
  }

  @Test func aNewerFormatVersionIsReportedAndKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    try await writeStore(path, format: .xml, rows: 2)
    _ = try python(
      """
      import plistlib, sys
      store = plistlib.load(open(sys.argv[1], 'rb'))
      store['CofferStore']['version'] = 2
      plistlib.dump(store, open(sys.argv[1], 'wb'))
      """, [path])
    try await expectOpenFails(path, code: .corruptStore, mentioning: ["version 2", "newer Coffer"])
  }

  @Test func aRowWithAValueOfTheWrongTypeIsReportedAndKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    try await writeStore(path, format: .binary, rows: 2)
    _ = try python(
      """
      import plistlib, sys
      store = plistlib.load(open(sys.argv[1], 'rb'))
      store['entities']['Post'][1]['thread'] = 'seven'
      plistlib.dump(store, open(sys.argv[1], 'wb'), fmt=plistlib.FMT_BINARY)
      """, [path])
    try await expectOpenFails(path, code: .corruptStore, mentioning: ["row 1 of 'Post'", "'thread'"])
  }

  @Test func aMissingOrUnwritableDirectoryIsReported() async throws {
    #expect {
      _ = try PlistBackend(path: "/nonexistent-\(UUID().uuidString)/store.plist")
    } throws: { ($0 as? CofferError)?.code == .io }
    #expect {
      _ = try PlistBackend(path: "/proc/coffer-\(UUID().uuidString).plist")
    } throws: { ($0 as? CofferError)?.code == .io }
  }

  @Test func aSecondWriterIsRefusedWhileTheFirstHasTheStoreOpen() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let first = try PlistBackend(path: path)
    #expect {
      _ = try PlistBackend(path: path)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .locked && error?.path == path
        && error?.message.contains("another process") == true
    }
    try await first.close()
    let second = try PlistBackend(path: path)
    try await second.close()
  }

  @Test func badURLsNameTheProblem() async throws {
    let registry = plistRegistry()
    for url in [
      "plist:", "plist://host/x.plist", "plist:x.plist?format=json", "plist:x.plist?persist=sometimes",
      "plist:x.plist?color=red",
    ] {
      await #expect(throws: CofferError.self, "\(url)") { _ = try await registry.open(url) }
    }
  }
}
