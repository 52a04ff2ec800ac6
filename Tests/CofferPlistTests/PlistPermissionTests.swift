import Coffer
import CofferTestSupport
import Foundation
import Testing

/// A store may hold private data: its files are its owner's alone, and Coffer never writes
/// through a symbolic link planted beside the store.
@Suite struct PlistPermissionTests {
  @Test func theStoreFileAndItsLockAreOwnerOnly() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("private.plist")
    let store = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    try await store.insert((1...3).map(samplePost))
    for file in [path, path + ".lock"] {
      #expect(isOwnerOnly(file), "\(file) has mode \(String(permissions(of: file) ?? -1, radix: 8))")
    }
    try await store.close()
  }

  @Test func aLinkPlantedAtTheLockPathIsRefusedAndItsTargetKept() async throws {
    let folder = try TemporaryFolder()
    let path = folder.file("store.plist")
    let target = folder.file("precious.txt")
    try Data("keep me".utf8).write(to: URL(fileURLWithPath: target))
    try FileManager.default.createSymbolicLink(atPath: path + ".lock", withDestinationPath: target)
    await #expect {
      _ = try await Store.open(url: "plist://\(path)", registry: plistRegistry())
    } throws: { error in
      guard let error = error as? CofferError else { return false }
      return error.code == .io && error.message.contains("symbolic link")
    }
    #expect(FileManager.default.contents(atPath: target) == Data("keep me".utf8))
    #expect(!FileManager.default.fileExists(atPath: path))
  }
}
