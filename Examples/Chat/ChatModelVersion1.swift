import Coffer
import Foundation

/// How the first release of the chat app stored a thread: its title and creation time in one
/// `label` text, `TITLE|ISO-8601 TIME`. ``ChatMigrations/plan`` splits it into
/// ``ChatThread/title`` and ``ChatThread/createdAt``. Kept to write such stores in tests.
public struct ChatThreadVersion1: Storable, Hashable {
  /// The entity it was stored as, the one ``ChatThread`` uses now.
  public static var entityName: String { "ChatThread" }
  /// The thread's id.
  public var id: UUID
  /// `TITLE|ISO-8601 TIME`.
  public var label: String

  /// A thread as version 1 stored it.
  public init(id: UUID = UUID(), title: String, createdAt: Date) {
    self.id = id
    self.label = title + "|" + ISO8601DateFormatter().string(from: createdAt)
  }
}

/// How the first release stored a message: `author` and `body` (now ``ChatMessage/sender`` and
/// ``ChatMessage/text``) and `read` as 0 or 1 (now the Boolean ``ChatMessage/isRead``).
public struct ChatMessageVersion1: Storable, Hashable {
  /// The entity it was stored as, the one ``ChatMessage`` uses now.
  public static var entityName: String { "ChatMessage" }
  /// The message's id.
  public var id: UUID
  /// The thread it belongs to.
  public var threadID: UUID
  /// Who wrote it; ``ChatMessage/sender`` now.
  public var author: String
  /// What it says; ``ChatMessage/text`` now.
  public var body: String
  /// When it was sent.
  public var date: Date
  /// 1 when read, 0 when not; ``ChatMessage/isRead`` now.
  public var read: Int64

  /// A message as version 1 stored it.
  public init(id: UUID = UUID(), threadID: UUID, author: String, body: String, date: Date, read: Bool) {
    self.id = id
    self.threadID = threadID
    self.author = author
    self.body = body
    self.date = date
    self.read = read ? 1 : 0
  }

  /// The index version 1 had, the one ``ChatMessage`` has.
  public static var indexes: [Index] { [.on("threadID", "date")] }
}
