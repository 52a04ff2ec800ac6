import CofferMacros
import Foundation

/// A chat message as a plain value: the ``MessageProtocol`` type the example stores.
///
/// `@Storable` generates its schema, a row codec that bypasses `Codable`, and the key-path map
/// that lets code holding a `ChatMessage` query with key paths:
///
/// ```swift
/// let unread = try await store.query(ChatMessage.self)
///   .filter(\.threadID == thread.id && \.isRead == false)
///   .sort(\.date, .descending)
///   .fetch()
/// ```
///
/// Messages are read a thread at a time, newest first, so the type declares an index on
/// `threadID` then `date`; a backend that keeps indexes uses it for those pages.
@Storable
public struct ChatMessage: MessageProtocol, Hashable {
  /// The message's identity.
  public var id: UUID
  /// The thread the message belongs to.
  @Reference(ChatThread.self, onDelete: .cascade) public var threadID: UUID
  /// Who wrote it.
  public var sender: String
  /// What it says.
  public var text: String
  /// When it was posted.
  public var date: Date
  /// Whether the reader has seen it.
  public var isRead: Bool

  /// A message.
  public init(
    id: UUID = UUID(), threadID: UUID, sender: String, text: String, date: Date = .now, isRead: Bool = false
  ) {
    self.id = id
    self.threadID = threadID
    self.sender = sender
    self.text = text
    self.date = date
    self.isRead = isRead
  }

  /// An index on `threadID`, `date`: the order a thread's pages are read in.
  public static var indexes: [Index] { [.on("threadID", "date")] }
}
