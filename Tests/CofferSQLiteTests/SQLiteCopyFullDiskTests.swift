@_spi(Backend) import Coffer
import CofferChildProcess
@_spi(Backend) import CofferConformance
import CofferStores
import CofferTestSupport
import CofferTools
import Foundation
import Testing

/// A copy whose target disk fills up: it fails with `storageFull`, keeps the batches it
/// committed, and a resumed copy finishes the job once there is room.
@Suite(.serialized) struct SQLiteCopyFullDiskTests {
  @Test func aCopyThatFillsTheDiskResumesOnceThereIsRoom() async throws {
    let folder = try TemporaryFolder()
    guard let tiny = try SmallFileSystem.mount(in: folder, size: "1m") else {
      print("Skipped: mounting a 1 MiB tmpfs needs root; a copy onto a full disk was not exercised.")
      try Test.cancel("mounting a tmpfs is not permitted here")
    }
    defer { tiny.unmount() }

    // About 3 MiB of rows: far more than the 1 MiB file system holds.
    let source = try await Store.open(url: "memory:")
    try await source.prepare(schemas: EveryKindFixture.schemas)
    try await source.apply(EveryKindFixture.changeSet(extra: 3_000))
    let padding = try EntitySchema(
      name: "Padding", fields: [Field("id", .int), Field("text", .string)], idField: "id")
    try await source.prepare(schemas: [padding])
    try await source.backend.insert(into: padding, count: 3_000) { number in
      Row([.int(Int64(number)), .string(String(repeating: "p", count: 1_000))])
    }

    let path = tiny.path + "/copy.sqlite"
    let target = try await Store.open(url: "sqlite://\(path)", registry: sqliteRegistry())
    var copier = StoreCopier(from: source, to: target)
    copier.batchSize = 200
    await #expect {
      try await copier.run()
    } throws: { error in
      (error as? CofferError)?.code == .storageFull
    }
    let partial = try await target.digest()
    #expect(partial != (try await source.digest()), "the failed copy must not look complete")

    // Room again: the same file system, grown.
    let remount = try await ChildProcess.run("/bin/mount", ["-o", "remount,size=64m", tiny.path])
    try #require(remount.termination.status == 0, "remount: \(remount.errors)")
    copier.resume = true
    let report = try await copier.run()
    #expect(report.isVerified, "\(report.differences)")
    #expect(try await target.digest() == (try await source.digest()))
    #expect(
      report.entities.reduce(0) { $0 + $1.rowsAlreadyThere } > 0, "the resumed copy kept what was copied")
    try await target.close()
  }
}
