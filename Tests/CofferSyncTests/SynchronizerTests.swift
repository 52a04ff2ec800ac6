@_spi(Backend) import Coffer
import CofferStores
import CofferSync
import CofferTestSupport
import Foundation
import Testing

/// Two replicas synced directly, store to store.
@Suite struct SynchronizerTests {
  static let note: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Note",
        fields: [Field("id", .int), Field("title", .string), Field("stars", .int, isOptional: true)],
        idField: "id")
    } catch {
      preconditionFailure("The test schema is well formed")
    }
  }()

  static func open(_ url: String) async throws -> Store {
    let store = try await Store.open(url: url, registry: .builtIn)
    try await store.prepare(schemas: [note])
    return store
  }

  static func note(_ id: Int64, _ title: String, _ stars: Int64? = nil) -> Row {
    Row([.int(id), .string(title), stars.map(Value.int) ?? .null])
  }

  static func notes(_ store: Store) async throws -> [Row] {
    try await store.fetchRows(Query(entity: "Note", sort: [Sort("id")]))
  }

  @Test func sqliteAndLMDBExchangeInsertsUpdatesAndDeletes() async throws {
    let folder = try TemporaryFolder("sync")
    let a = try await Self.open("sqlite://\(folder.file("a.sqlite"))")
    let b = try await Self.open("lmdb://\(folder.file("b"))")
    try await a.apply(
      ChangeSet([
        .insert(entity: "Note", row: Self.note(1, "milk")),
        .insert(entity: "Note", row: Self.note(2, "eggs")),
      ]))
    let sync = Synchronizer(local: SyncReplica(store: a), remote: SyncReplica(store: b))
    let first = try await sync.sync()
    #expect(first.pushedRows == 2)
    #expect(try await Self.notes(b) == [Self.note(1, "milk"), Self.note(2, "eggs")])

    try await b.apply(
      ChangeSet([
        .update(entity: "Note", row: Self.note(1, "oat milk", 3)), .delete(entity: "Note", id: .int(2)),
      ]))
    try await a.apply(ChangeSet([.insert(entity: "Note", row: Self.note(3, "bread"))]))
    try await sync.sync()
    let expected = [Self.note(1, "oat milk", 3), Self.note(3, "bread")]
    #expect(try await Self.notes(a) == expected)
    #expect(try await Self.notes(b) == expected)
  }

  @Test func aChangeAppliedBySyncIsNotSentBackAsNew() async throws {
    let folder = try TemporaryFolder("sync")
    let a = try await Self.open("memory:")
    let b = try await Self.open("sqlite://\(folder.file("b.sqlite"))")
    try await a.apply(ChangeSet([.insert(entity: "Note", row: Self.note(1, "milk"))]))
    let sync = Synchronizer(local: SyncReplica(store: a), remote: SyncReplica(store: b))
    try await sync.sync()
    let again = try await sync.sync()
    #expect(again.pushedRows == 0 && again.pulledRows == 0)
    let positions = (try await a.lastChangePosition(), try await b.lastChangePosition())
    let third = try await sync.sync()
    #expect(third.pushedRows == 0 && third.pulledRows == 0)
    #expect(try await a.lastChangePosition() == positions.0)
    #expect(try await b.lastChangePosition() == positions.1)
  }

  @Test func concurrentEditsOfDifferentFieldsBothSurvive() async throws {
    let folder = try TemporaryFolder("sync")
    let a = try await Self.open("sqlite://\(folder.file("a.sqlite"))")
    let b = try await Self.open("lmdb://\(folder.file("b"))")
    try await a.apply(ChangeSet([.insert(entity: "Note", row: Self.note(1, "milk"))]))
    let sync = Synchronizer(local: SyncReplica(store: a), remote: SyncReplica(store: b))
    try await sync.sync()
    try await a.apply(ChangeSet([.update(entity: "Note", row: Self.note(1, "oat milk"))]))
    try await b.apply(ChangeSet([.update(entity: "Note", row: Self.note(1, "milk", 5))]))
    try await sync.sync()
    #expect(try await Self.notes(a) == [Self.note(1, "oat milk", 5)])
    #expect(try await Self.notes(b) == [Self.note(1, "oat milk", 5)])
  }

  @Test func syncGoesOnAfterTheStoresAreOpenedAgain() async throws {
    let folder = try TemporaryFolder("sync")
    let urls = ("sqlite://\(folder.file("a.sqlite"))", "lmdb://\(folder.file("b"))")
    do {
      let a = try await Self.open(urls.0)
      let b = try await Self.open(urls.1)
      try await a.apply(ChangeSet([.insert(entity: "Note", row: Self.note(1, "milk"))]))
      try await Synchronizer(local: SyncReplica(store: a), remote: SyncReplica(store: b)).sync()
      try await a.apply(ChangeSet([.insert(entity: "Note", row: Self.note(2, "eggs"))]))
      try await a.close()
      try await b.close()
    }
    let a = try await Self.open(urls.0)
    let b = try await Self.open(urls.1)
    let report = try await Synchronizer(local: SyncReplica(store: a), remote: SyncReplica(store: b)).sync()
    #expect(report.pushedRows == 1)
    #expect(try await Self.notes(b) == [Self.note(1, "milk"), Self.note(2, "eggs")])
  }

  @Test func replicasWithOtherFieldsAreRefused() async throws {
    let a = try await Self.open("memory:")
    let b = try await Store.open(url: "memory:", registry: .builtIn)
    try await b.prepare(schemas: [
      try EntitySchema(name: "Note", fields: [Field("id", .int), Field("title", .int)], idField: "id")
    ])
    let error = await #expect(throws: CofferError.self) {
      try await Synchronizer(local: SyncReplica(store: a), remote: SyncReplica(store: b)).sync()
    }
    #expect(error?.code == .schemaMismatch)
    #expect(error?.entity == "Note")
  }
}
