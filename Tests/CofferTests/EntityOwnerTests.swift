@_spi(Backend) import Coffer
import CofferMemory
import Testing

/// Two Swift types stored under one entity name, as when an app keeps an old and a new
/// version of a model.
struct PersonSummary: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
}

struct PersonDetail: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var nickname: String?
}

@Suite struct EntityOwnerTests {
  @Test func typesSharingAnEntityTakeTurnsAndEachReadsWithItsOwnSchema() async throws {
    let store = Store(backend: MemoryBackend())
    try await store.insert(PersonSummary(id: 1, name: "Ana"))
    #expect(try await store.get(PersonDetail.self, id: 1) == PersonDetail(id: 1, name: "Ana", nickname: nil))
    try await store.insert(PersonDetail(id: 2, name: "Raj", nickname: "R"))
    // The summary type prepares the entity again with its own schema, then the detail type.
    #expect(try await store.get(PersonSummary.self, id: 2) == PersonSummary(id: 2, name: "Raj"))
    #expect(try await store.all(PersonDetail.self).map(\.name) == ["Ana", "Raj"])
    #expect(store.schema(of: "Person")?.fields.map(\.name) == ["id", "name", "nickname"])
    try await store.batch(for: [PersonSummary.self]) { batch in
      try batch.insert(PersonSummary(id: 3, name: "Li"))
    }
    #expect(store.schema(of: "Person")?.fields.map(\.name) == ["id", "name"])
    #expect(try await store.query(PersonSummary.self).count() == 3)
  }
}
