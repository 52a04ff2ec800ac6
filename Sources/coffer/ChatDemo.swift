import Coffer
import CofferChatExample
import Foundation

/// The chat example run step by step, narrating what it does.
///
/// Writes go through ``ChatService``; the reads the demo shows are key-path queries on the
/// `@Storable` types, which the compiler checks field by field.
///
/// The demo uses fixed ids and dates, so its output is the same on every run and it can first
/// remove whatever an earlier run left in a store that keeps its data.
struct ChatDemo {
  typealias Chat = ChatService<ChatThread, ChatMessage>

  let chat: Chat
  let say: (String) -> Void

  /// Ids of the demo's threads: fixed, so a second run finds the first one's data.
  static let hikeID = demoID(1)
  static let releaseID = demoID(2)
  /// 2025-06-14 09:00:00 UTC; message times count on from here.
  static let start = Date(timeIntervalSince1970: 1_749_891_600)

  static func demoID(_ number: UInt8) -> UUID {
    UUID(uuid: (0xC0, 0xFF, 0xE4, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, number))
  }

  func run() async throws {
    try await chat.prepare()
    try await clearEarlierRuns()
    let (hike, release) = try await createThreads()
    try await postMessages(hike: hike, release: release)
    try await showNewestPage(of: hike)
    try await showUnreadCounts(hike: hike, release: release, step: 5, heading: "Unread counts")
    let marked = try await chat.markThreadRead(hike.id)
    say("6. Marking \"\(hike.title)\" read: \(marked) messages changed, in one batch")
    try await showUnreadCounts(hike: hike, release: release, step: 7, heading: "Unread counts now")
    try await search()
    try await insertDuplicate(of: hike)
    try await deleteThread(release)
  }

  private func clearEarlierRuns() async throws {
    say("1. Removing what an earlier demo left in this store")
    var removed = 0
    for id in [Self.hikeID, Self.releaseID] {
      let deletion = try await chat.deleteThread(id)
      removed += deletion.messagesRemoved + (deletion.threadRemoved ? 1 : 0)
    }
    say(removed == 0 ? "   nothing to remove" : "   removed \(removed) values")
  }

  private func createThreads() async throws -> (ChatThread, ChatThread) {
    say("2. Creating threads")
    let hike = try await chat.createThread(title: "Weekend hike", id: Self.hikeID, createdAt: Self.start)
    let release = try await chat.createThread(
      title: "Release planning", id: Self.releaseID, createdAt: Self.start.addingTimeInterval(60))
    for thread in [hike, release] { say("   + \"\(thread.title)\"  id \(thread.id)") }
    return (hike, release)
  }

  private func postMessages(hike: ChatThread, release: ChatThread) async throws {
    say("3. Posting messages")
    let script: [(ChatThread, String, String)] = [
      (hike, "ana", "Saturday at 8? The trail opens early."),
      (release, "raj", "Can we ship 1.0 on Friday?"),
      (hike, "ben", "8 works. I'll bring coffee."),
      (release, "ana", "Only if the conformance suite is green."),
      (hike, "ana", "Meet at the north car park."),
      (release, "raj", "Ship it when CI passes, then."),
      (hike, "cho", "Count me in!"),
    ]
    for (minute, (thread, sender, text)) in script.enumerated() {
      let date = Self.start.addingTimeInterval(Double(minute + 2) * 60)
      let message = try await chat.post(
        text, from: sender, in: thread.id, at: date, id: Self.demoID(UInt8(16 + minute)))
      say("   + \(clock(message.date))  \(thread.title) · \(sender): \(text)")
    }
  }

  private func showNewestPage(of thread: ChatThread) async throws {
    let messages = chat.store.query(ChatMessage.self).filter(\.threadID == thread.id)
    let total = try await messages.count()
    let newestFirst = messages.sort(\.date, .descending)
    let page = try await newestFirst.limit(2).fetch()
    say("4. Newest page of \"\(thread.title)\": \(page.count) of its \(total) messages, newest first")
    for message in page { say("   \(clock(message.date))  \(message.sender): \(message.text)") }
    let next = try await newestFirst.offset(2).limit(2).fetch()
    say("   next page: \(next.map { clock($0.date) }.joined(separator: ", "))")
  }

  private func showUnreadCounts(hike: ChatThread, release: ChatThread, step: Int, heading: String)
    async throws
  {
    // One grouped count gives every thread's unread messages.
    let groups = try await chat.store.query(ChatMessage.self).filter(\.isRead == false).group(by: \.threadID)
      .count()
    let unread = Dictionary(uniqueKeysWithValues: groups.map { ($0.key, $0.value) })
    let hikeCount = unread[hike.id, default: 0]
    let releaseCount = unread[release.id, default: 0]
    let all = unread.values.reduce(0, +)
    say(
      "\(step). \(heading): \(hike.title) \(hikeCount), \(release.title) \(releaseCount), all threads \(all)")
  }

  private func search() async throws {
    say("8. Searching message text (case-sensitive, no wildcards)")
    for term in ["ship", "Ship"] {
      let found = try await chat.store.query(ChatMessage.self).filter(.contains(\.text, term)).sort(\.date)
        .fetch()
      say("   \"\(term)\": \(found.count) \(found.count == 1 ? "message" : "messages")")
      for message in found { say("     \(clock(message.date))  \(message.sender): \(message.text)") }
    }
  }

  private func insertDuplicate(of thread: ChatThread) async throws {
    say("9. Creating a thread with an id that is already stored")
    do {
      try await chat.createThread(title: "Another hike", id: thread.id, createdAt: Self.start)
      say("   unexpectedly accepted")
    } catch let error as CofferError {
      say("   refused, nothing stored: \(error.description)")
    }
  }

  private func deleteThread(_ thread: ChatThread) async throws {
    let deletion = try await chat.deleteThread(thread.id)
    say(
      "10. Deleting \"\(thread.title)\" with its messages in one batch: removed the thread and "
        + "\(deletion.messagesRemoved) messages")
    let left = try await chat.threads().map { "\"\($0.title)\"" }.joined(separator: ", ")
    say(
      "    threads left: \(left.isEmpty ? "none" : left); unread in all threads: \(try await chat.unreadCount())"
    )
  }

  private func clock(_ date: Date) -> String {
    date.formatted(Date.ISO8601FormatStyle(timeZone: .gmt).time(includingFractionalSeconds: false))
  }
}
