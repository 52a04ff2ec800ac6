import Coffer
import Foundation
import Testing

/// A run-time entity with a custom id attribute, defaults and a validation rule.
func contactEntity() throws -> DynamicEntity {
  try DynamicEntity(
    name: "Contact",
    fields: [
      Field("handle", .string), Field("name", .string), Field("age", .int, isOptional: true),
      Field("vip", .bool),
    ],
    idAttribute: "handle", defaults: ["name": "Unknown", "vip": false],
    validate: { record in
      guard case .string(let name)? = record["name"], name.isEmpty else { return [] }
      return [ValidationProblem(field: "name", "must not be empty")]
    })
}

@Suite struct DynamicRecordTests {
  @Test func aNewRecordHasTheDefaultsAndNoID() throws {
    let record = try DynamicRecord(contactEntity())
    #expect(record.isNew)
    #expect(record.id == nil)
    #expect(record.get("name") == "Unknown")
    #expect(record.has("vip"))
    #expect(!record.has("age"))
  }

  @Test func theIDAttributeIsTheOneTheEntityNames() throws {
    var record = try DynamicRecord(contactEntity())
    try record.set("handle", "ana")
    #expect(record.id == "ana")
    #expect(!record.isNew)
    record.unset("handle")
    #expect(record.isNew)
  }

  @Test func setAndUnsetChangeAttributes() throws {
    var record = try DynamicRecord(contactEntity())
    try record.set("age", 42)
    #expect(record["age"] == .int(42))
    record.unset("age")
    #expect(record["age"] == nil)
    #expect(!record.has("age"))
  }

  @Test func anUnknownAttributeOrWrongKindIsRefusedAndChangesNothing() throws {
    var record = try DynamicRecord(contactEntity())
    expectSyncError(.invalidValue) { try record.set("nickname", "A") }
    expectSyncError(.invalidValue) { try record.set(["age": 3, "vip": "yes"]) }
    #expect(!record.has("age"))
  }

  @Test func aDefaultForAnUnknownFieldIsAnInvalidSchema() {
    #expect(throws: CofferError.self) {
      try DynamicEntity(name: "X", fields: [Field("id", .int)], defaults: ["missing": 1])
    }
  }

  @Test(arguments: graphStoreURLs) func recordsAreStoredAndReadBackLikeTypedValues(url: String) async throws {
    try await withStore(url) { store, _ in
      let entity = try contactEntity()
      var ana = try DynamicRecord(entity, attributes: ["handle": "ana", "name": "Ana", "age": 30])
      try await store.insert(ana)
      try await store.insert(DynamicRecord(entity, attributes: ["handle": "ben", "vip": true]))
      #expect(try await store.record(entity, id: "ana") == ana)
      try ana.set("age", 31)
      try await store.upsert(ana)
      let vips = try await store.records(entity, where: FieldRef("vip") == true)
      #expect(vips.map(\.id) == ["ben"])
      #expect(try await store.record(entity, id: "ana")?["age"] == .int(31))
      try await store.delete(ana)
      #expect(try await store.record(entity, id: "ana") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func aNewRecordCannotBeStored(url: String) async throws {
    try await withStore(url) { store, _ in
      let record = try DynamicRecord(contactEntity())
      await expectError(.invalidValue) { try await store.insert(record) }
    }
  }

  @Test(arguments: graphStoreURLs) func eventsCanFollowARuntimeEntityARecordAndOneAttribute(url: String)
    async throws
  {
    try await withStore(url) { store, _ in
      let entity = try contactEntity()
      let graph = ModelGraph(store: store)
      var ana = try DynamicRecord(entity, attributes: ["handle": "ana", "name": "Ana"])
      try await graph.upsert(ana)
      let contacts = graph.events(for: entity)
      let anaOnly = graph.events(for: ana)
      let names = graph.events(for: entity, id: "ana", field: "name")
      try await graph.insert(Author(id: "1", name: "Not a contact"))
      try await graph.upsert(DynamicRecord(entity, attributes: ["handle": "bo", "name": "Bo"]))
      try ana.set(["age": 31])
      try await graph.upsert(ana)
      try ana.set(["name": "Ana B"])
      try await graph.upsert(ana)
      #expect(
        await next(3, of: contacts) == [
          .inserted(ModelKey(entity: "Contact", id: "bo")),
          .updated(ModelKey(entity: "Contact", id: "ana"), fields: ["age"]),
          .updated(ModelKey(entity: "Contact", id: "ana"), fields: ["name"]),
        ])
      #expect(
        await next(2, of: anaOnly) == [
          .updated(ModelKey(entity: "Contact", id: "ana"), fields: ["age"]),
          .updated(ModelKey(entity: "Contact", id: "ana"), fields: ["name"]),
        ])
      #expect(
        await next(1, of: names) == [.updated(ModelKey(entity: "Contact", id: "ana"), fields: ["name"])])
    }
  }

  @Test(arguments: graphStoreURLs) func aGraphEmitsAnEventNamingEachChangedAttribute(url: String) async throws
  {
    try await withStore(url) { store, _ in
      let entity = try contactEntity()
      let graph = ModelGraph(store: store)
      var ana = try DynamicRecord(entity, attributes: ["handle": "ana", "name": "Ana"])
      try await graph.upsert(ana)
      let events = graph.events()
      try ana.set(["age": 30, "vip": true])
      try await graph.upsert(ana)
      #expect(
        await next(1, of: events) == [
          .updated(ModelKey(entity: "Contact", id: "ana"), fields: ["age", "vip"])
        ])
      try await graph.save()
      #expect(try await store.record(entity, id: "ana")?["age"] == .int(30))
    }
  }

  @Test(arguments: graphStoreURLs) func aGraphRejectsARecordItsEntityFindsInvalid(url: String) async throws {
    try await withStore(url) { store, _ in
      let entity = try contactEntity()
      let graph = ModelGraph(store: store)
      let record = try DynamicRecord(entity, attributes: ["handle": "x", "name": ""])
      let error = await #expect(throws: CofferError.self) { try await graph.upsert(record) }
      #expect(error?.validationProblems == [ValidationProblem(field: "name", "must not be empty")])
      #expect(try await graph.record(entity, id: "x") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func insertGivesANewRecordOfAUUIDEntityAFreshID(url: String) async throws {
    try await withStore(url) { store, _ in
      let entity = try DynamicEntity(name: "Tag", fields: [Field("id", .uuid), Field("label", .string)])
      let inserted = try await store.insert(DynamicRecord(entity, attributes: ["label": "urgent"]))
      let id = try #require(inserted.id)
      #expect(!inserted.isNew)
      #expect(try await store.record(entity, id: id)?["label"] == "urgent")
    }
  }

  @Test(arguments: graphStoreURLs) func aGraphRefusesToUpsertARecordWithoutAnID(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      await expectError(.invalidValue) { try await graph.upsert(DynamicRecord(contactEntity())) }
      #expect(graph.count == 0)
    }
  }

  @Test(arguments: graphStoreURLs) func aGraphReadsAndDeletesStoredRecords(url: String) async throws {
    try await withStore(url) { store, _ in
      let entity = try contactEntity()
      try await store.insert(DynamicRecord(entity, attributes: ["handle": "ana", "name": "Ana"]))
      let graph = ModelGraph(store: store)
      let ana = try #require(try await graph.record(entity, id: "ana"))
      #expect(ana["name"] == "Ana")
      try await graph.delete(ana)
      #expect(try await graph.record(entity, id: "ana") == nil)
      #expect(try await store.record(entity, id: "ana") != nil)
      try await graph.save()
      #expect(try await store.record(entity, id: "ana") == nil)
    }
  }
}
