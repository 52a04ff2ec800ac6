@_spi(Backend) import Coffer
import CofferServer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

@_spi(Backend) @testable import CofferSync

/// The server side of sync: a replica the server runs (`SyncReplica(servedBy:)`), reached through
/// `coffer+http://` with tokens whose scopes and entities decide what a client sees and changes.
@Suite struct ServedSyncTests {
  static let full = "full-token-0123456789abcdef"
  static let notebooksOnly = "notebooks-token-0123456789abcdef"
  static let reader = "reader-token-0123456789abcdef"

  /// A server over an SQLite store holding ann's and bob's notebooks and an audit row, with three
  /// tokens: every scope and entity; read and write of notebooks only; read of everything.
  final class Served {
    let folder: TemporaryFolder
    let store: Store
    let port: Int
    private let serving: Task<Void, any Error>

    init() async throws {
      folder = try TemporaryFolder("served-sync")
      store = try await PartialSyncTests.open("sqlite://\(folder.file("server.sqlite"))")
      try await store.apply(
        ChangeSet([
          .insert(entity: "Notebook", row: PartialSyncTests.notebook(1, "ann", "recipes", 10)),
          .insert(entity: "Notebook", row: PartialSyncTests.notebook(2, "bob", "birds", 20)),
          .insert(entity: "Audit", row: Row([.int(1), .string("created")])),
        ]))
      let (ports, sink) = AsyncStream.makeStream(of: Int.self)
      var configuration = CofferServer.Configuration(
        port: 0,
        tokens: [
          .init(secret: ServedSyncTests.full, scopes: [.read, .write]),
          .init(secret: ServedSyncTests.notebooksOnly, scopes: [.read, .write], entities: ["Notebook"]),
          .init(secret: ServedSyncTests.reader, scopes: [.read]),
        ])
      configuration.onListening = { port in
        sink.yield(port)
        sink.finish()
      }
      let server = CofferServer(store: store, configuration: configuration)
      serving = Task { try await server.run() }
      var found = 0
      for await port in ports { found = port }
      port = found
    }

    /// The served store as a client with `token` opens it.
    func client(_ token: String) async throws -> Store {
      let path = folder.file("token-\(token.prefix(4))")
      try Data(token.utf8).write(to: URL(fileURLWithPath: path))
      return try await Store.open(
        url: "coffer+http://127.0.0.1:\(port)?tokenFile=\(path)", registry: .builtIn)
    }

    func stop() async {
      serving.cancel()
      _ = try? await serving.value
      try? await store.close()
    }
  }

  @Test func theServerRunsTheReplicaAClientSyncsWith() async throws {
    let served = try await Served()
    let phone = try await PartialSyncTests.open("memory:")
    try await phone.apply(
      ChangeSet([.insert(entity: "Notebook", row: PartialSyncTests.notebook(3, "ann", "trips", 1))]))
    let remote = try SyncReplica(servedBy: try await served.client(Self.full))
    let sync = Synchronizer(local: SyncReplica(store: phone), remote: remote)
    try await sync.sync()
    #expect(try await PartialSyncTests.notebooks(phone) == PartialSyncTests.notebooks(served.store))
    #expect(try await PartialSyncTests.notebooks(phone).count == 3)
    #expect(try await phone.fetchRows(Query(entity: "Audit")).count == 1)
    // The server's replica is the one its store keeps.
    #expect(try await remote.replicaID() == SyncReplica(store: served.store).replicaID())
    await served.stop()
  }

  @Test func aTokenLimitedToSomeEntitiesNeitherReceivesNorSendsOthers() async throws {
    let served = try await Served()
    let phone = try await PartialSyncTests.open("memory:")
    let local = SyncReplica(store: phone, subscriptions: [SyncSubscription("Notebook")])
    let remote = try SyncReplica(servedBy: try await served.client(Self.notebooksOnly))
    let sync = Synchronizer(local: local, remote: remote)
    try await sync.sync()
    #expect(try await PartialSyncTests.notebooks(phone).count == 2)
    #expect(try await phone.fetchRows(Query(entity: "Audit")).isEmpty)
    // What the server's replica sends this token names no other entity, not even withheld.
    let message = try await remote.message(after: nil, for: [SyncSubscription("Notebook")])
    #expect(Set(message.states.map(\.entity) + message.outside.map(\.entity)) == ["Notebook"])

    try await phone.apply(
      ChangeSet([
        .insert(entity: "Notebook", row: PartialSyncTests.notebook(3, "ann", "trips", 1)),
        .insert(entity: "Audit", row: Row([.int(2), .string("from the phone")])),
      ]))
    try await sync.sync()
    #expect(try await PartialSyncTests.notebooks(served.store).count == 3)
    #expect(try await served.store.fetchRows(Query(entity: "Audit")).count == 1)
    await served.stop()
  }

  @Test func aTokenLimitedToSomeEntitiesMustSubscribeToThoseOnly() async throws {
    let served = try await Served()
    let remoteStore = try await served.client(Self.notebooksOnly)
    for subscriptions in [
      nil, [SyncSubscription("Audit")], [SyncSubscription("Notebook"), SyncSubscription("Audit")],
    ] {
      let phone = try await PartialSyncTests.open("memory:")
      let sync = Synchronizer(
        local: SyncReplica(store: phone, subscriptions: subscriptions),
        remote: try SyncReplica(servedBy: remoteStore))
      let error = await #expect(throws: CofferError.self) { try await sync.sync() }
      #expect(error?.code == .accessDenied)
      #expect(error?.message.contains(Self.notebooksOnly) == false)
      #expect(try await phone.fetchRows(Query(entity: "Audit")).isEmpty)
    }
    await served.stop()
  }

  @Test func aForgedMessageWithAnotherEntityIsRefused() async throws {
    let served = try await Served()
    let remoteStore = try await served.client(Self.notebooksOnly)
    let serving = try #require(remoteStore.backend as? any SyncServing)
    let clock = SyncClock(physical: 1_900_000_000_000_000, logical: 0, replica: "forger")
    let state = SyncRowState(
      entity: "Audit", id: .int(9),
      fields: ["id": .init(value: .int(9), clock: clock), "what": .init(value: "forged", clock: clock)])
    var message = SyncMessage(
      source: "forger", from: nil, to: ChangePosition(sequence: 1), states: [state],
      schemas: ["Audit": SyncRecords.fingerprint(PartialSyncTests.audit)])
    message.subscriptions = SyncSubscriptions.fingerprint([SyncSubscription("Notebook")])
    let error = await #expect(throws: CofferError.self) { try await serving.syncReceive(message) }
    #expect(error?.code == .accessDenied && error?.entity == "Audit")
    #expect(error?.message.contains("forged") == false)
    #expect(try await served.store.fetchRows(Query(entity: "Audit")).count == 1)
    await served.stop()
  }

  @Test func aTokenWithoutTheWriteScopePullsButCannotPush() async throws {
    let served = try await Served()
    let phone = try await PartialSyncTests.open("memory:")
    let sync = Synchronizer(
      local: SyncReplica(store: phone),
      remote: try SyncReplica(servedBy: try await served.client(Self.reader)))
    try await sync.sync()
    #expect(try await PartialSyncTests.notebooks(phone).count == 2)
    try await phone.apply(
      ChangeSet([.insert(entity: "Notebook", row: PartialSyncTests.notebook(3, "ann", "trips", 1))]))
    let error = await #expect(throws: CofferError.self) { try await sync.sync() }
    #expect(error?.code == .accessDenied)
    #expect(error?.message.contains(Self.reader) == false)
    #expect(try await PartialSyncTests.notebooks(served.store).count == 2)
    await served.stop()
  }
}
