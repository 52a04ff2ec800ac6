import Coffer
import Foundation

/// A conversation as a plain value: the ``ThreadProtocol`` type the example stores.
///
/// Being `Storable` is all it takes for any Coffer store to keep it; its schema is derived
/// from its `Codable` conformance.
public struct ChatThread: ThreadProtocol, Storable, Hashable {
  /// The thread's identity.
  public var id: UUID
  /// What the conversation is about.
  public var title: String
  /// When the thread was started.
  public var createdAt: Date

  /// A thread.
  public init(id: UUID = UUID(), title: String, createdAt: Date = .now) {
    self.id = id
    self.title = title
    self.createdAt = createdAt
  }
}
