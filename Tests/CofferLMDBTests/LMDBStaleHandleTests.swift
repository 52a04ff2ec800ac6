@_spi(Backend) import Coffer
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferLMDB

/// A backend whose handles predate another backend's prepare of the entity (as another
/// process's would) keeps the indexes the store has now, and reads only the indexes it still
/// has.
@Suite struct LMDBStaleHandleTests {
  private let old = try! EntitySchema(
    name: "Item", fields: [Field("id", .int), Field("group", .int), Field("code", .string)], idField: "id",
    indexes: [.on("code")])
  private let new = try! EntitySchema(
    name: "Item",
    fields: [
      Field("id", .int), Field("level", .int, default: 7), Field("group", .int), Field("code", .string),
    ],
    idField: "id", indexes: [.on("group"), .on("level"), .unique("code")])

  @Test func writesThroughAnOlderHandleKeepTheNewIndexes() async throws {
    let folder = try TemporaryFolder()
    let writer = try LMDBBackend(path: folder.path)
    try await writer.prepare([old])
    try await writer.apply(ChangeSet([.insert(entity: "Item", row: Row([1, 1, "c1"]))]))
    let other = try LMDBBackend(path: folder.path)
    try await other.prepare([new])
    try await other.close()

    try await writer.apply(ChangeSet([.insert(entity: "Item", row: Row([2, 2, "c2"]))]))
    try await writer.apply(ChangeSet([.update(entity: "Item", row: Row([1, 5, "c1"]))]))
    await #expect(throws: CofferError.self) {
      try await writer.apply(ChangeSet([.insert(entity: "Item", row: Row([3, 0, "c1"]))]))
    }
    // The index on code the writer was made with is gone: its reads still find the rows.
    #expect(
      try await writer.fetch(Query(entity: "Item", filter: FieldRef("code") == "c2")) == [Row([2, 2, "c2"])])

    let reader = try LMDBBackend(path: folder.path)
    try await reader.prepare([new])
    #expect(try await reader.fetch(Query(entity: "Item", filter: FieldRef("level") == 7)).count == 2)
    #expect(
      try await reader.fetch(Query(entity: "Item", filter: FieldRef("group") == 5)) == [Row([1, 7, 5, "c1"])])
    #expect(
      try await reader.fetch(Query(entity: "Item", filter: FieldRef("group") == 2)) == [Row([2, 7, 2, "c2"])])
    #expect(try await reader.checkStorage().isEmpty)
    try await reader.close()
    try await writer.close()
  }

  @Test func readsThroughAnOlderHandleSkipADroppedIndex() async throws {
    let folder = try TemporaryFolder()
    let reader = try LMDBBackend(path: folder.path)
    try await reader.prepare([old])
    try await reader.apply(ChangeSet([.insert(entity: "Item", row: Row([1, 1, "c1"]))]))
    let other = try LMDBBackend(path: folder.path)
    try await other.prepare([new])
    try await other.apply(ChangeSet([.insert(entity: "Item", row: Row([2, 9, 2, "c2"]))]))
    try await other.close()
    // The reader never writes, so its handle is never made again: its index on code is gone.
    #expect(
      try await reader.fetch(Query(entity: "Item", filter: FieldRef("code") == "c2")) == [Row([2, 2, "c2"])])
    #expect(try await reader.count(Query(entity: "Item", filter: FieldRef("code") == "c1")) == 1)
    #expect(
      try await reader.fetch(Query(entity: "Item", sort: [Sort("code", ascending: false)], limit: 1))
        == [Row([2, 2, "c2"])])
    try await reader.close()
  }
}
