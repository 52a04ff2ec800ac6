import Coffer
import CofferSQLite
import CofferTestSupport
import Foundation
import Testing

/// A store may hold private data: the files Coffer creates for it are its owner's alone.
@Suite struct SQLitePermissionTests {
  @Test func aNewDatabaseAndItsLogAreOwnerOnly() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("private.sqlite")
    let store = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    try await store.insert((1...3).map(sampleMessage))
    for file in [path, path + "-wal", path + "-shm"] {
      #expect(isOwnerOnly(file), "\(file) has mode \(String(permissions(of: file) ?? -1, radix: 8))")
    }
    try await store.close()
  }
}
