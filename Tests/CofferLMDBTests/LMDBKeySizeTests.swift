import Coffer
import CofferMacros
import CofferTestSupport
import Foundation
import Testing

/// A record whose indexed title can outgrow an LMDB key.
@Storable
struct Headline: Equatable {
  var id: Int64
  @Indexed var title: String
}

/// LMDB keys hold at most 511 bytes: a value that makes a longer index key is an `invalidValue`
/// that names the entity, the row and the field, and the batch applies nothing.
@Suite struct LMDBKeySizeTests {
  @Test func anIndexedValueTooLongForAKeyNamesEntityIDAndField() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    try await store.insert(Headline(id: 1, title: "short"))
    let error = await #expect(throws: CofferError.self) {
      try await store.insert([
        Headline(id: 2, title: "fits"), Headline(id: 3, title: String(repeating: "x", count: 600)),
      ])
    }
    #expect(error?.code == .invalidValue)
    #expect(error?.entity == "Headline")
    #expect(error?.field == "title")
    #expect(error?.id == "3")
    #expect(error?.message.contains("xxxx") == false, "the message names no value")
    #expect(try await store.all(Headline.self) == [Headline(id: 1, title: "short")])
    try await store.close()
  }
}

/// A record with a string id, which can outgrow an LMDB key.
@Storable
struct Slug: Equatable {
  var id: String
  var count: Int64
}

extension LMDBKeySizeTests {
  @Test func anIDTooLongForAKeyNamesEntityIDFieldAndIsNeverFound() async throws {
    let folder = try TemporaryFolder()
    let store = try await openStore(folder.path)
    let long = String(repeating: "s", count: 600)
    let error = await #expect(throws: CofferError.self) {
      try await store.insert([Slug(id: "a", count: 1), Slug(id: long, count: 2)])
    }
    #expect(error?.code == .invalidValue)
    #expect(error?.entity == "Slug")
    #expect(error?.field == "id")
    #expect(try await store.all(Slug.self) == [])
    #expect(try await store.get(Slug.self, id: long) == nil)
    await #expect(throws: CofferError.self) { try await store.upsert(Slug(id: long, count: 3)) }
    try await store.close()
  }
}
