@_spi(Backend) import Coffer
import CofferChatExample
import CofferMemory
import Foundation
import Testing

@Suite struct ChatServiceTests {
  typealias Chat = ChatService<ChatThread, ChatMessage>

  let chat = Chat(store: Store(backend: MemoryBackend()))
  let start = Date(timeIntervalSince1970: 1_700_000_000)

  func at(_ minute: Int) -> Date { start.addingTimeInterval(Double(minute) * 60) }

  @Test func createdThreadsAreListedOldestFirst() async throws {
    let late = try await chat.createThread(title: "late", createdAt: at(5))
    let early = try await chat.createThread(title: "early", createdAt: at(1))
    #expect(try await chat.threads() == [early, late])
    #expect(try await chat.thread(late.id) == late)
  }

  @Test func createdAndPostedValuesEqualWhatTheStoreReturns() async throws {
    let thread = try await chat.createThread(title: "now")
    let message = try await chat.post("hello", from: "ana", in: thread.id)
    #expect(try await chat.thread(thread.id) == thread)
    #expect(try await chat.newestPage(in: thread.id) == [message])
  }

  @Test func creatingAThreadWithAStoredIDFailsWithDuplicateID() async throws {
    let thread = try await chat.createThread(title: "one")
    let error = await #expect(throws: CofferError.self) {
      try await chat.createThread(title: "two", id: thread.id)
    }
    #expect(error?.code == .duplicateID)
    #expect(try await chat.thread(thread.id)?.title == "one")
  }

  @Test func postingToAMissingThreadFailsWithNotFoundAndStoresNothing() async throws {
    let error = await #expect(throws: CofferError.self) { try await chat.post("hi", from: "ana", in: UUID()) }
    #expect(error?.code == .notFound)
    #expect(try await chat.unreadCount() == 0)
  }

  @Test func newestPageIsNewestFirstAndPagesNeitherOverlapNorSkip() async throws {
    let thread = try await chat.createThread(title: "t")
    let other = try await chat.createThread(title: "other")
    for minute in 0..<5 { try await chat.post("m\(minute)", from: "ana", in: thread.id, at: at(minute)) }
    // Two messages at the same instant come in id order.
    try await chat.post("tie", from: "ben", in: thread.id, at: at(2))
    try await chat.post("elsewhere", from: "ana", in: other.id, at: at(9))

    let first = try await chat.newestPage(in: thread.id, limit: 4)
    let second = try await chat.newestPage(in: thread.id, limit: 4, offset: 4)
    #expect(first.map(\.text).prefix(2) == ["m4", "m3"])
    #expect(first.count == 4 && second.count == 2)
    #expect(Set((first + second).map(\.id)).count == 6)
    #expect((first + second).allSatisfy { $0.threadID == thread.id })
    let dates = (first + second).map(\.date)
    #expect(dates == dates.sorted(by: >))
  }

  @Test func markingReadChangesUnreadCountsPerThreadAndOverall() async throws {
    let a = try await chat.createThread(title: "a")
    let b = try await chat.createThread(title: "b")
    let first = try await chat.post("1", from: "ana", in: a.id, at: at(1))
    try await chat.post("2", from: "ana", in: a.id, at: at(2))
    try await chat.post("3", from: "ben", in: b.id, at: at(3))
    #expect(try await chat.unreadCount(in: a.id) == 2)
    #expect(try await chat.unreadCount() == 3)
    #expect(try await chat.unreadCounts() == [a.id: 2, b.id: 1])

    #expect(try await chat.markRead(messageID: first.id))
    #expect(try await chat.unreadCount(in: a.id) == 1)
    #expect(try await chat.markThreadRead(a.id) == 1)
    #expect(try await chat.markThreadRead(a.id) == 0)
    #expect(try await chat.unreadCount(in: a.id) == 0)
    #expect(try await chat.unreadCount(in: b.id) == 1)
    #expect(try await chat.markRead(messageID: UUID()) == false)
  }

  @Test func searchIsCaseSensitiveLiteralAndOldestFirst() async throws {
    let a = try await chat.createThread(title: "a")
    let b = try await chat.createThread(title: "b")
    try await chat.post("Ship it", from: "ana", in: a.id, at: at(3))
    try await chat.post("we ship today", from: "ben", in: a.id, at: at(1))
    try await chat.post("ship 100% done", from: "cho", in: b.id, at: at(2))

    #expect(try await chat.search("ship").map(\.text) == ["we ship today", "ship 100% done"])
    #expect(try await chat.search("Ship").map(\.text) == ["Ship it"])
    #expect(try await chat.search("ship", in: b.id).map(\.text) == ["ship 100% done"])
    #expect(try await chat.search("100%").count == 1)
    #expect(try await chat.search("1_0").isEmpty)
  }

  @Test func searchByWordsFoldsCaseAndAccentsAndRanksBestFirst() async throws {
    let a = try await chat.createThread(title: "a")
    let b = try await chat.createThread(title: "b")
    try await chat.post("Ship it", from: "ana", in: a.id, at: at(3))
    try await chat.post("we ship today, ship!", from: "ben", in: a.id, at: at(1))
    try await chat.post("shipping 100% done", from: "cho", in: b.id, at: at(2))
    try await chat.post("Café draft", from: "dee", in: b.id, at: at(4))

    #expect(try await chat.search(words: "SHIP").map(\.text) == ["we ship today, ship!", "Ship it"])
    #expect(try await Set(chat.search(words: "ship*").map(\.text)).count == 3)
    #expect(try await chat.search(words: "ship*", in: b.id).map(\.text) == ["shipping 100% done"])
    #expect(try await chat.search(words: "cafe").map(\.text) == ["Café draft"])
    #expect(try await chat.search(words: "ship NOT today").map(\.text) == ["Ship it"])
    #expect(try await chat.search(words: "ship", limit: 1).map(\.text) == ["we ship today, ship!"])
  }

  @Test func deletingAThreadRemovesItAndOnlyItsMessages() async throws {
    let a = try await chat.createThread(title: "a")
    let b = try await chat.createThread(title: "b")
    for minute in 0..<3 { try await chat.post("a\(minute)", from: "ana", in: a.id, at: at(minute)) }
    try await chat.post("b", from: "ben", in: b.id)

    let deletion = try await chat.deleteThread(a.id)
    #expect(deletion.threadRemoved && deletion.messagesRemoved == 3)
    #expect(try await chat.thread(a.id) == nil)
    #expect(try await chat.messageCount(in: a.id) == 0)
    #expect(try await chat.messageCount(in: b.id) == 1)
    #expect(try await chat.threads() == [b])

    let again = try await chat.deleteThread(a.id)
    #expect(!again.threadRemoved && again.messagesRemoved == 0)
  }

  @Test func aMessageRefersToItsThreadAndGoesWithIt() async throws {
    let a = try await chat.createThread(title: "a")
    try await chat.post("a", from: "ana", in: a.id)
    let orphan = ChatMessage(threadID: UUID(), sender: "ana", text: "lost")
    let error = await #expect(throws: CofferError.self) { try await chat.store.insert(orphan) }
    #expect(error?.code == .referenceViolation)
    try await chat.store.delete(ChatThread.self, id: a.id)
    #expect(try await chat.messageCount(in: a.id) == 0)
  }

  @Test func theServiceRunsUnchangedOverOtherConformingTypes() async throws {
    let chat = ChatService<ArchivedThread, ArchivedMessage>(store: Store(backend: MemoryBackend()))
    let thread = try await chat.createThread(title: "archive")
    try await chat.post("kept", from: "ana", in: thread.id)
    #expect(try await chat.newestPage(in: thread.id).map(\.text) == ["kept"])
    #expect(try await chat.store.query(ArchivedMessage.self).count() == 1)
  }
}

/// A second thread type, stored under its own entity name, to show that ``ChatService``
/// depends only on the protocols.
struct ArchivedThread: ThreadProtocol, Storable {
  var id: UUID
  var title: String
  var createdAt: Date
  var archivedBy: String?

  init(id: UUID, title: String, createdAt: Date) {
    self.id = id
    self.title = title
    self.createdAt = createdAt
  }

  static var entityName: String { "Archive.Thread" }
}

/// A second message type with an extra field.
struct ArchivedMessage: MessageProtocol, Storable {
  var id: UUID
  var threadID: UUID
  var sender: String
  var text: String
  var date: Date
  var isRead: Bool
  var flagged = false

  init(id: UUID, threadID: UUID, sender: String, text: String, date: Date, isRead: Bool) {
    self.id = id
    self.threadID = threadID
    self.sender = sender
    self.text = text
    self.date = date
    self.isRead = isRead
  }

  static var entityName: String { "Archive.Message" }
}
