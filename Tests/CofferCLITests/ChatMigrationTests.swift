@_spi(Backend) import Coffer
import CofferChatExample
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The chat example's plan takes a store the first release wrote to this release's model on
/// every backend, and leaves a store this release made as it is.
@Suite struct ChatMigrationTests {
  @Test(arguments: ["memory", "sqlite", "lmdb", "plist", "postgres"])
  func aVersionOneStoreOpensWithTheNewModel(scheme: String) async throws {
    let folder = try TemporaryFolder("coffer-chat-migration-\(scheme)")
    let url: String
    var removeScratch: (@Sendable (StoreURL) async -> Void)?
    switch scheme {
    case "memory": url = "memory:chat-migration-\(UUID().uuidString)"
    case "postgres":
      // A schema of its own on the test server, dropped afterwards.
      guard let server = TestServers.postgresURL else {
        try Test.cancel("Skipped: \(TestServers.postgresMissing)")
      }
      let base = try StoreURL(server)
      let entry = try BackendRegistry.builtIn.entry(for: base)
      url = entry.scratchURL(base, "cli-tests", "chat-migration-\(UUID().uuidString)").description
      removeScratch = entry.removeScratch
    default: url = "\(scheme)://" + folder.file(scheme == "lmdb" ? "store" : "store.\(scheme)")
    }
    let created = Date(timeIntervalSince1970: 1_714_557_600)
    let lunch = ChatThreadVersion1(title: "Lunch | plans", createdAt: created)
    let old = [
      ChatMessageVersion1(
        threadID: lunch.id, author: "Ann", body: "Noodles?", date: created.addingTimeInterval(60), read: true),
      ChatMessageVersion1(
        threadID: lunch.id, author: "Bo", body: "Yes", date: created.addingTimeInterval(120), read: false),
    ]
    let first = try await Store.open(url: url)
    try await first.insert(lunch)
    try await first.insert(old)
    if scheme != "memory" { try await first.close() }

    let store = try await Store.open(url: url, migrating: ChatMigrations.plan)
    let threads = try await store.all(ChatThread.self)
    #expect(threads == [ChatThread(id: lunch.id, title: "Lunch | plans", createdAt: created)])
    let messages = try await store.query(ChatMessage.self).sort(\.date).fetch()
    #expect(
      messages == [
        ChatMessage(
          id: old[0].id, threadID: lunch.id, sender: "Ann", text: "Noodles?", date: old[0].date, isRead: true),
        ChatMessage(
          id: old[1].id, threadID: lunch.id, sender: "Bo", text: "Yes", date: old[1].date, isRead: false),
      ])
    let unread = try await store.query(ChatMessage.self).filter(\.isRead == false).group(by: \.threadID)
      .count()
    #expect(unread.map(\.key) == [lunch.id] && unread.map(\.value) == [1])
    #expect(try await store.migrations().map(\.name) == ChatMigrations.plan.steps.map(\.name))
    try await store.close()
    if let removeScratch { await removeScratch(try StoreURL(url)) }
  }

  @Test func aNewStoreIsMarkedMigratedAndKeepsItsValues() async throws {
    let store = try await Store.open(
      url: "memory:chat-migration-new-\(UUID().uuidString)", registry: .builtIn,
      migrating: ChatMigrations.plan)
    let thread = ChatThread(title: "New", createdAt: Date(timeIntervalSince1970: 1_800_000_000))
    try await store.insert(thread)
    let report = try await store.migrate(ChatMigrations.plan)
    #expect(report.steps.allSatisfy { $0.outcome == .alreadyApplied })
    #expect(try await store.all(ChatThread.self) == [thread])
  }
}
