@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

@testable import CofferSync

/// Partial sync: a replica that subscribes to part of the rows holds exactly those, on every
/// backend it can live on, and what enters or leaves them follows.
@Suite struct PartialSyncTests {
  static let notebook: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Notebook",
        fields: [Field("id", .int), Field("owner", .string), Field("title", .string), Field("pages", .int)],
        idField: "id")
    } catch {
      preconditionFailure("The test schema is well formed")
    }
  }()
  static let audit: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Audit", fields: [Field("id", .int), Field("what", .string)], idField: "id")
    } catch {
      preconditionFailure("The test schema is well formed")
    }
  }()

  static let anns = [SyncSubscription("Notebook", where: .compare(field: "owner", op: .equal, value: "ann"))]
  static let bobs = [SyncSubscription("Notebook", where: FieldRef("owner") == "bob")]

  /// The backends a partial replica is tested on.
  static let backends = ["memory", "sqlite", "lmdb", "plist"]

  /// A server holding ann's and bob's notebooks and audit rows, and a phone of `backend`
  /// subscribed to ann's notebooks; synced once.
  struct Pair {
    let folder: TemporaryFolder
    let server: Store
    let phone: Store
    let serverReplica: SyncReplica
    let phoneReplica: SyncReplica
    var sync: Synchronizer { Synchronizer(local: phoneReplica, remote: serverReplica) }

    init(phoneOn backend: String) async throws {
      folder = try TemporaryFolder("partial")
      server = try await PartialSyncTests.open("sqlite://\(folder.file("server.sqlite"))")
      phone = try await PartialSyncTests.open(try PartialSyncTests.url(backend, folder))
      try await server.apply(
        ChangeSet([
          .insert(entity: "Notebook", row: PartialSyncTests.notebook(1, "ann", "recipes", 10)),
          .insert(entity: "Notebook", row: PartialSyncTests.notebook(2, "bob", "birds", 20)),
          .insert(entity: "Notebook", row: PartialSyncTests.notebook(3, "ann", "trips", 30)),
          .insert(entity: "Audit", row: Row([.int(1), .string("created")])),
        ]))
      serverReplica = SyncReplica(store: server)
      phoneReplica = SyncReplica(store: phone, subscriptions: PartialSyncTests.anns)
      try await sync.sync()
    }
  }

  static func url(_ backend: String, _ folder: TemporaryFolder) throws -> String {
    switch backend {
    case "memory": return "memory:"
    case "sqlite": return "sqlite://\(folder.file("phone.sqlite"))"
    case "lmdb": return "lmdb://\(folder.file("phone"))"
    case "plist": return "plist://\(folder.file("phone.plist"))?format=binary"
    default: throw CofferError(.invalidConfiguration, "No phone store on \(backend) here.")
    }
  }

  static func open(_ url: String) async throws -> Store {
    let store = try await Store.open(url: url, registry: .builtIn)
    try await store.prepare(schemas: [notebook, audit])
    return store
  }

  static func notebook(_ id: Int64, _ owner: String, _ title: String, _ pages: Int64) -> Row {
    Row([.int(id), .string(owner), .string(title), .int(pages)])
  }

  static func notebooks(_ store: Store) async throws -> [Row] {
    try await store.fetchRows(Query(entity: "Notebook", sort: [Sort("id")]))
  }

  @Test(arguments: backends)
  func aPartialReplicaHoldsExactlyTheRowsItSubscribesTo(backend: String) async throws {
    let pair = try await Pair(phoneOn: backend)
    #expect(
      try await Self.notebooks(pair.phone) == [
        Self.notebook(1, "ann", "recipes", 10), Self.notebook(3, "ann", "trips", 30),
      ])
    #expect(try await pair.phone.fetchRows(Query(entity: "Audit")).isEmpty)
    // Nothing it lacks is sent back as a delete.
    #expect(try await Self.notebooks(pair.server).count == 3)
  }

  @Test(arguments: backends)
  func aRowUpdatedOutOfTheSubscriptionLeavesWithoutBeingDeletedElsewhere(backend: String) async throws {
    let pair = try await Pair(phoneOn: backend)
    try await pair.server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(1, "bob", "recipes", 11))]))
    try await pair.sync.sync()
    #expect(try await Self.notebooks(pair.phone) == [Self.notebook(3, "ann", "trips", 30)])
    try await pair.sync.sync()
    #expect(
      try await Self.notebooks(pair.server) == [
        Self.notebook(1, "bob", "recipes", 11), Self.notebook(2, "bob", "birds", 20),
        Self.notebook(3, "ann", "trips", 30),
      ])
    // The phone keeps no sync state of it either.
    #expect(try await pair.phoneReplica.syncStates(["Notebook\u{1F}i1"]).isEmpty)
  }

  @Test(arguments: backends)
  func aRowThatEntersArrivesWhole(backend: String) async throws {
    let pair = try await Pair(phoneOn: backend)
    // Only the owner changes: the phone never had the row, so it must get every field.
    try await pair.server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(2, "ann", "birds", 20))]))
    try await pair.sync.sync()
    #expect(try await Self.notebooks(pair.phone).contains(Self.notebook(2, "ann", "birds", 20)))
  }

  @Test(arguments: backends)
  func aRowThatLeftAndCameBackArrivesWithItsLatestValues(backend: String) async throws {
    let pair = try await Pair(phoneOn: backend)
    try await pair.server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(1, "bob", "recipes", 10))]))
    try await pair.sync.sync()
    try await pair.server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(1, "bob", "cakes", 12))]))
    try await pair.sync.sync()
    try await pair.server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(1, "ann", "cakes", 12))]))
    try await pair.sync.sync()
    #expect(try await Self.notebooks(pair.phone).first == Self.notebook(1, "ann", "cakes", 12))
  }

  @Test(arguments: backends)
  func aLocalWriteOutsideTheSubscriptionIsSentThenLeaves(backend: String) async throws {
    let pair = try await Pair(phoneOn: backend)
    try await pair.phone.apply(
      ChangeSet([
        .insert(entity: "Notebook", row: Self.notebook(4, "bob", "gifts", 1)),
        .update(entity: "Notebook", row: Self.notebook(3, "bob", "trips", 30)),
        .insert(entity: "Audit", row: Row([.int(2), .string("from the phone")])),
      ]))
    try await pair.sync.sync()
    #expect(try await Self.notebooks(pair.phone) == [Self.notebook(1, "ann", "recipes", 10)])
    #expect(try await pair.phone.fetchRows(Query(entity: "Audit")).isEmpty)
    #expect(try await Self.notebooks(pair.server).contains(Self.notebook(4, "bob", "gifts", 1)))
    #expect(try await Self.notebooks(pair.server).contains(Self.notebook(3, "bob", "trips", 30)))
    #expect(try await pair.server.fetchRows(Query(entity: "Audit")).count == 2)
  }

  @Test(arguments: backends)
  func changingSubscriptionsBringsNewlyCoveredRowsAndRemovesTheOthers(backend: String) async throws {
    let pair = try await Pair(phoneOn: backend)
    try await pair.phoneReplica.subscribe(Self.bobs + [SyncSubscription("Audit")])
    // Rows no longer covered leave at once, before any sync.
    #expect(try await Self.notebooks(pair.phone).isEmpty)
    try await pair.sync.sync()
    #expect(try await Self.notebooks(pair.phone) == [Self.notebook(2, "bob", "birds", 20)])
    #expect(try await pair.phone.fetchRows(Query(entity: "Audit")).count == 1)
    #expect(try await Self.notebooks(pair.server).count == 3)
    // Every row again.
    try await pair.phoneReplica.subscribe(nil)
    try await pair.sync.sync()
    #expect(try await Self.notebooks(pair.phone) == Self.notebooks(pair.server))
  }

  @Test func aNewReplicaOverTheStoreWithOtherSubscriptionsChangesThem() async throws {
    let pair = try await Pair(phoneOn: "sqlite")
    let again = SyncReplica(store: pair.phone, subscriptions: Self.bobs)
    try await Synchronizer(local: again, remote: pair.serverReplica).sync()
    #expect(try await Self.notebooks(pair.phone) == [Self.notebook(2, "bob", "birds", 20)])
    // The same list: positions kept, nothing more to merge.
    let same = SyncReplica(store: pair.phone, subscriptions: Self.bobs)
    let report = try await Synchronizer(local: same, remote: pair.serverReplica).sync()
    #expect(report.pulledRows == 0)
  }

  @Test func aMessageFilteredForOtherSubscriptionsIsNotTaken() async throws {
    let pair = try await Pair(phoneOn: "memory")
    let serverID = try await pair.serverReplica.replicaID()
    try await pair.server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(2, "ann", "birds", 20))]))
    let position = try await pair.phoneReplica.position(of: serverID)
    let stale = try await pair.serverReplica.message(after: position, for: Self.bobs)
    #expect(try await pair.phoneReplica.receive(stale) == .gap)
    let right = try await pair.serverReplica.message(after: position, for: Self.anns)
    #expect(try await pair.phoneReplica.receive(right) == .merged(1))
  }

  @Test func aFilteredMessageHoldsOnlyTheClocksOfRowsOutside() async throws {
    let pair = try await Pair(phoneOn: "memory")
    let message = try await pair.serverReplica.message(after: nil, for: Self.anns)
    #expect(Set(message.states.map(\.id)) == [.int(1), .int(3)])
    #expect(message.outside.map(\.id) == [.int(2)])
    #expect(message.outside.allSatisfy { $0.fields.values.allSatisfy { $0.value == .null } })
    #expect(
      !message.states.contains { $0.entity == "Audit" } && !message.outside.contains { $0.entity == "Audit" })
  }

  @Test func twoPartialReplicasDoNotSyncWithEachOther() async throws {
    let pair = try await Pair(phoneOn: "memory")
    let tablet = SyncReplica(store: try await Self.open("memory:"), subscriptions: Self.bobs)
    let error = await #expect(throws: CofferError.self) {
      try await Synchronizer(local: tablet, remote: pair.phoneReplica).sync()
    }
    #expect(error?.code == .unsupported)
  }

  @Test func aPartialReplicaRefusesTheImplicitGenesisStamp() async throws {
    let store = try await Self.open("memory:")
    let replica = SyncReplica(store: store, genesis: .implicit, subscriptions: Self.anns)
    await #expect(throws: CofferError.self) { try await replica.replicaID() }
  }

  @Test func aRowReferringToARowOutsideTheSubscriptionsIsHeldBack() async throws {
    let folder = try TemporaryFolder("partial")
    let page = try EntitySchema(
      name: "Page", fields: [Field("id", .int), Field("notebook", .int)], idField: "id",
      references: [EntityReference(field: "notebook", entity: "Notebook", onDelete: .cascade)])
    let server = try await Self.open("sqlite://\(folder.file("server.sqlite"))")
    let phone = try await Self.open("memory:")
    try await server.prepare(schemas: [page])
    try await phone.prepare(schemas: [page])
    try await server.apply(
      ChangeSet([
        .insert(entity: "Notebook", row: Self.notebook(1, "ann", "recipes", 10)),
        .insert(entity: "Page", row: Row([.int(1), .int(1)])),
      ]))
    let phoneReplica = SyncReplica(store: phone, subscriptions: Self.anns + [SyncSubscription("Page")])
    let sync = Synchronizer(local: phoneReplica, remote: SyncReplica(store: server))
    try await sync.sync()
    #expect(try await phone.fetchRows(Query(entity: "Page")).count == 1)
    try await server.apply(
      ChangeSet([.update(entity: "Notebook", row: Self.notebook(1, "bob", "recipes", 10))]))
    try await sync.sync()
    #expect(try await phone.fetchRows(Query(entity: "Page")).isEmpty)
    #expect(try await phoneReplica.conflicts().map(\.id) == [.int(1)])
    #expect(try await server.fetchRows(Query(entity: "Page")).count == 1)
  }
}
