@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@testable import CofferLMDB

@Suite struct LMDBURLTests {
  func configuration(_ url: String) throws -> LMDBBackend.Configuration {
    try LMDBBackend.configuration(from: StoreURL(url))
  }

  @Test func sizesTakeBinaryUnits() throws {
    let configuration = try configuration("lmdb:///d?mapSize=1GiB&maxMapSize=2T&maxReaders=300")
    #expect(configuration.mapSize == 1 << 30)
    #expect(configuration.maxMapSize == 2 << 40)
    #expect(configuration.maxReaders == 300)
    #expect(try self.configuration("lmdb:///d?mapSize=1048576").mapSize == 1 << 20)
  }

  @Test func aMapSizeAboveTheDefaultMaximumRaisesIt() throws {
    let configuration = try configuration("lmdb:///d?mapSize=128GiB")
    #expect(configuration.maxMapSize == 128 << 30)
  }

  @Test(arguments: [
    ("lmdb:///d?mapSize=big", "mapSize must be a size"),
    ("lmdb:///d?mapSize=1KiB", "at least 64KiB"),
    ("lmdb:///d?mapSize=2GiB&maxMapSize=1GiB", "larger than maxMapSize"),
    ("lmdb:///d?maxReaders=0", "maxReaders must be"),
    ("lmdb:///d?mapsize=1GiB", "Options they take: mapSize, maxMapSize, maxReaders"),
  ])
  func badOptionsAreInvalidURLs(url: String, words: String) {
    #expect {
      _ = try configuration(url)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidURL && error?.message.contains(words) == true
    }
  }

  @Test func pathsMayBeRelativeButNotHosts() throws {
    #expect(try LMDBBackend.path(from: StoreURL("lmdb:data/store")) == "data/store")
    #expect(try LMDBBackend.path(from: StoreURL("lmdb:///var/store/")) == "/var/store")
    #expect(throws: CofferError.self) { try LMDBBackend.path(from: StoreURL("lmdb://host/store")) }
    #expect(throws: CofferError.self) { try LMDBBackend.path(from: StoreURL("lmdb:")) }
  }

  @Test func aRelativeURLOpensInTheWorkingDirectory() async throws {
    let folder = try TemporaryFolder()
    let depth = FileManager.default.currentDirectoryPath.split(separator: "/").count
    let relative = String(repeating: "../", count: depth) + folder.path.dropFirst() + "/relative-store"
    let store = try await Store.open(url: "lmdb:\(relative)", registry: lmdbRegistry())
    try await store.insert(sampleNote(1))
    try await store.close()
    #expect(FileManager.default.fileExists(atPath: folder.file("relative-store/data.mdb")))
  }
}
