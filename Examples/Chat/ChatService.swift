import Coffer
import Foundation

/// The chat features an app needs, written only against ``ThreadProtocol``,
/// ``MessageProtocol`` and a ``Coffer/Store``.
///
/// The service never names a backend, nor a concrete thread or message type: it is generic over
/// both, so the same code runs on any store a URL opens, with any value types that conform.
///
/// ```swift
/// let store = try await Store.open(url: "memory:", registry: registry)
/// let chat = ChatService<ChatThread, ChatMessage>(store: store)
/// let thread = try await chat.createThread(title: "Lunch")
/// try await chat.post("Noodles?", from: "ana", in: thread.id)
/// let page = try await chat.newestPage(in: thread.id, limit: 20)
/// ```
///
/// ## Topics
/// - ``createThread(title:id:createdAt:)``
/// - ``post(_:from:in:at:id:)``
/// - ``newestPage(in:limit:offset:)``
/// - ``markRead(messageID:)``
/// - ``markThreadRead(_:)``
/// - ``unreadCount(in:)``
/// - ``search(_:in:)``
/// - ``search(words:in:limit:)``
/// - ``deleteThread(_:)``
public struct ChatService<ThreadValue: ThreadProtocol & Storable, MessageValue: MessageProtocol & Storable>:
  Sendable
{
  /// The store threads and messages are kept in.
  public let store: Store

  /// A service over a store.
  public init(store: Store) { self.store = store }

  /// Prepares the thread and message entities now, so that a stored schema that does not match
  /// the types fails here rather than at first use.
  public func prepare() async throws {
    try await store.prepare([ThreadValue.self, MessageValue.self])
  }

  /// Starts a thread.
  ///
  /// - Returns: the thread as the store keeps it (its date rounded to the microsecond), so it
  ///   equals what later reads return.
  /// - Throws: ``Coffer/CofferError/Code/duplicateID`` if a thread with `id` is stored.
  @discardableResult
  public func createThread(title: String, id: UUID = UUID(), createdAt: Date = .now) async throws
    -> ThreadValue
  {
    let thread = ThreadValue(id: id, title: title, createdAt: Value.normalized(createdAt))
    try await store.insert(thread)
    return thread
  }

  /// The thread with an id, or `nil`.
  public func thread(_ id: UUID) async throws -> ThreadValue? {
    try await store.get(ThreadValue.self, id: id)
  }

  /// Every thread, oldest first.
  public func threads() async throws -> [ThreadValue] {
    try await store.query(ThreadValue.self).sort([Sort(ThreadFields.createdAt.name)]).fetch()
  }

  /// Posts an unread message to a thread.
  ///
  /// - Returns: the message as the store keeps it (its date rounded to the microsecond).
  /// - Throws: ``Coffer/CofferError/Code/notFound`` if the thread is not stored,
  ///   ``Coffer/CofferError/Code/duplicateID`` if a message with `id` is.
  @discardableResult
  public func post(
    _ text: String, from sender: String, in threadID: UUID, at date: Date = .now, id: UUID = UUID()
  ) async throws -> MessageValue {
    guard try await store.get(ThreadValue.self, id: threadID) != nil else {
      throw CofferError(
        .notFound, "There is no thread \(threadID) to post to; create it first with createThread(title:).",
        entity: ThreadValue.entityName, id: threadID.uuidString)
    }
    let message = MessageValue(
      id: id, threadID: threadID, sender: sender, text: text, date: Value.normalized(date), isRead: false)
    try await store.insert(message)
    return message
  }

  /// A page of a thread's messages, newest first: the first `limit` after skipping `offset`.
  /// Messages posted at the same instant come in id order, so pages never overlap or skip.
  public func newestPage(in threadID: UUID, limit: Int = 20, offset: Int = 0) async throws -> [MessageValue] {
    try await store.query(MessageValue.self)
      .filter(MessageFields.threadID == threadID)
      .sort([Sort(MessageFields.date.name, ascending: false)])
      .offset(offset)
      .limit(limit)
      .fetch()
  }

  /// How many messages a thread holds.
  public func messageCount(in threadID: UUID) async throws -> Int {
    try await store.query(MessageValue.self).filter(MessageFields.threadID == threadID).count()
  }
}
