import Coffer
import Foundation

/// Read state and search.
extension ChatService {
  /// Marks one message read.
  ///
  /// - Returns: `false` if no message with that id is stored.
  @discardableResult
  public func markRead(messageID: UUID) async throws -> Bool {
    guard var message = try await store.get(MessageValue.self, id: messageID) else { return false }
    if message.isRead { return true }
    message.isRead = true
    try await store.update(message)
    return true
  }

  /// Marks every unread message of a thread read, in one batch.
  ///
  /// - Returns: how many messages changed.
  @discardableResult
  public func markThreadRead(_ threadID: UUID) async throws -> Int {
    let unread = try await store.query(MessageValue.self)
      .filter(MessageFields.threadID == threadID && MessageFields.isRead == false)
      .fetch()
    if unread.isEmpty { return 0 }
    let summary = try await store.batch(for: [MessageValue.self]) { batch in
      for var message in unread {
        message.isRead = true
        try batch.update(message)
      }
    }
    return summary.updated
  }

  /// The number of unread messages in a thread, or in every thread when `threadID` is `nil`.
  public func unreadCount(in threadID: UUID? = nil) async throws -> Int {
    var filter = MessageFields.isRead == false
    if let threadID { filter = filter && MessageFields.threadID == threadID }
    return try await store.query(MessageValue.self).filter(filter).count()
  }

  /// The messages whose text contains `text` — case-sensitively, with no wildcards — oldest
  /// first, in one thread or, when `threadID` is `nil`, in all of them.
  public func search(_ text: String, in threadID: UUID? = nil) async throws -> [MessageValue] {
    var filter = MessageFields.text.contains(text)
    if let threadID { filter = filter && MessageFields.threadID == threadID }
    return try await store.query(MessageValue.self).filter(filter).sort([Sort(MessageFields.date.name)])
      .fetch()
  }

  /// The messages that have the words a full-text query asks for — `ship*`, `"ship it"`,
  /// `deploy OR release`, `NOT draft`, with case and accents folded — best match first (BM25,
  /// then oldest first), at most `limit` of them, in one thread or in all of them.
  public func search(words query: String, in threadID: UUID? = nil, limit: Int = 20) async throws
    -> [MessageValue]
  {
    var filter = MessageFields.text.matches(query)
    if let threadID { filter = filter && MessageFields.threadID == threadID }
    return try await store.query(MessageValue.self).filter(filter)
      .sort([.relevance(MessageFields.text.name), Sort(MessageFields.date.name)]).limit(limit).fetch()
  }
}

extension ChatService {
  /// How many unread messages each thread holds, by thread id, in one grouped count the store
  /// computes (SQL `GROUP BY` on SQLite and PostgreSQL); threads without unread messages are
  /// left out.
  ///
  /// ```swift
  /// let unread = try await chat.unreadCounts()
  /// print(unread[thread.id, default: 0])
  /// ```
  public func unreadCounts() async throws -> [UUID: Int] {
    try await store.prepare([MessageValue.self])
    let groups = try await store.aggregateRows(
      Aggregation(
        entity: MessageValue.entityName, filter: MessageFields.isRead == false, .count,
        groupedBy: MessageFields.threadID.name))
    var counts: [UUID: Int] = [:]
    for group in groups {
      if case .uuid(let thread) = group.key, case .int(let count) = group.value {
        counts[thread] = Int(count)
      }
    }
    return counts
  }
}
