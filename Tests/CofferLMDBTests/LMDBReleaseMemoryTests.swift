@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferLMDB

/// `releaseCachedMemory()` takes the store's pages out of this process: a whole read leaves the
/// file's pages mapped, and after a release few are, while every row still reads the same.
@Suite struct LMDBReleaseMemoryTests {
  /// The resident kibibytes of this process's mappings of `file`, from `/proc/self/smaps`;
  /// `nil` where the kernel does not provide it.
  static func residentKiB(ofMappingsOf file: String) -> Int? {
    // Read to the end: the kernel reports a size of 0 for the file.
    guard let handle = FileHandle(forReadingAtPath: "/proc/self/smaps"),
      let data = try? handle.readToEnd(), !data.isEmpty
    else { return nil }
    let smaps = String(decoding: data, as: UTF8.self)
    var total = 0
    var inFile = false
    for line in smaps.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      if let first = fields.first, first.contains("-"), fields.count >= 5 {
        inFile = fields.count >= 6 && fields[5...].joined(separator: " ") == file
      } else if inFile, fields.first == "Rss:", fields.count >= 2, let kib = Int(fields[1]) {
        total += kib
      }
    }
    return total
  }

  @Test func aReleaseDropsTheMappedPagesAndChangesNoRead() async throws {
    let folder = try TemporaryFolder()
    let backend = try LMDBBackend(path: folder.path)
    let store = Store(backend: backend)
    try await store.insert((1...20_000).map { sampleNote(Int64($0)) })
    let file = folder.path + "/data.mdb"
    guard Self.residentKiB(ofMappingsOf: file) != nil else {
      try await store.close()
      return
    }
    let notes = try await store.query(Note.self).fetch()
    let afterRead = try #require(Self.residentKiB(ofMappingsOf: file))
    let fileKiB = try #require(try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) / 1024
    #expect(afterRead > fileKiB / 2, "a whole read maps most of the file (\(afterRead) of \(fileKiB) KiB)")
    backend.releaseCachedMemory()
    let afterRelease = try #require(Self.residentKiB(ofMappingsOf: file))
    #expect(afterRelease < afterRead / 10, "resident after the release: \(afterRelease) KiB of \(afterRead)")
    #expect(try await store.query(Note.self).fetch() == notes)
    try await store.close()
  }
}
