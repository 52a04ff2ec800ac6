@_spi(Backend) import Coffer
import CofferChatExample
import CofferStores
import CofferSync
import CofferTestSupport
import Foundation
import Testing

/// The chat example kept in step between a device's SQLite store and a store served by
/// `CofferServer` (PostgreSQL, as issue 46 asks; SQLite too, so it runs without a database
/// server), through `coffer+http://`, with the example's own service on each side.
@Suite struct ChatSyncTests {
  typealias Chat = ChatService<ChatThread, ChatMessage>

  @Test(arguments: ["served-postgres", "served-sqlite"])
  func chatSyncsBetweenSQLiteAndAServedStore(server backend: String) async throws {
    if backend == "served-postgres" && TestServers.postgresURL == nil {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    guard ReplicaPlaces.available(backend, postgresURL: TestServers.postgresURL) else {
      try Test.cancel("Skipped: this build cannot make a \(backend) replica (enable every trait)")
    }
    try await ReplicaPlaces.using(["sqlite", backend], postgresURL: TestServers.postgresURL, label: "chat") {
      try await Self.conversation($0)
    }
  }

  /// A thread started on the device, answered and read on the server side, then deleted there.
  static func conversation(_ places: ReplicaPlaces) async throws {
    let phone = Chat(store: try await places.open(0, schemas: []))
    let server = Chat(store: try await places.open(1, schemas: []))
    try await phone.prepare()
    try await server.prepare()
    let sync = Synchronizer(local: SyncReplica(store: phone.store), remote: SyncReplica(store: server.store))
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    let lunch = try await phone.createThread(title: "Lunch", createdAt: start)
    let first = try await phone.post("Noodles?", from: "ana", in: lunch.id, at: start + 1)
    try await phone.post("Or soup", from: "ana", in: lunch.id, at: start + 2)
    try await sync.sync()
    #expect(try await server.threads() == [lunch])
    #expect(try await server.newestPage(in: lunch.id) == (try await phone.newestPage(in: lunch.id)))
    #expect(try await server.messageCount(in: lunch.id) == 2)

    // Both sides write before the next sync: a reply and a read mark there, a message here.
    try await server.post("Noodles!", from: "ben", in: lunch.id, at: start + 3)
    #expect(try await server.markRead(messageID: first.id))
    try await phone.post("At noon", from: "ana", in: lunch.id, at: start + 4)
    try await sync.sync()
    for chat in [phone, server] {
      let page = try await chat.newestPage(in: lunch.id)
      #expect(page.map(\.text) == ["At noon", "Noodles!", "Or soup", "Noodles?"])
      #expect(page.last?.isRead == true)
      #expect(try await chat.unreadCount(in: lunch.id) == 3)
    }

    // A thread deleted on the server goes with its messages (the cascade) on the device too.
    let other = try await phone.createThread(title: "Later", createdAt: start + 5)
    try await sync.sync()
    _ = try await server.deleteThread(lunch.id)
    try await sync.sync()
    for chat in [phone, server] {
      #expect(try await chat.threads() == [other])
      #expect(try await chat.messageCount(in: lunch.id) == 0)
    }
    let entities = [ChatThread.entityName, ChatMessage.entityName]
    #expect(
      try await phone.store.digest(entities: entities) == (try await server.store.digest(entities: entities)))
    let again = try await sync.sync()
    #expect(again.pushedRows == 0 && again.pulledRows == 0)
  }
}
