import Coffer
import CofferTestSupport
import Foundation
import Testing

/// A store may hold private data: the directory and files Coffer creates for it are its
/// owner's alone.
@Suite struct LMDBPermissionTests {
  @Test func aNewStoreDirectoryAndItsFilesAreOwnerOnly() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("private-store")
    let store = try await openStore(path)
    try await store.insert((1...3).map(sampleNote))
    for file in [path, path + "/data.mdb", path + "/lock.mdb"] {
      #expect(isOwnerOnly(file), "\(file) has mode \(String(permissions(of: file) ?? -1, radix: 8))")
    }
    try await store.close()
  }
}
