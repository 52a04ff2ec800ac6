import CofferMacros
import Foundation

/// A conversation as a plain value: the ``ThreadProtocol`` type the example stores.
///
/// `@Storable` is all it takes for any Coffer store to keep it: the macro writes its schema,
/// row codec and key-path map at compile time.
@Storable
public struct ChatThread: ThreadProtocol, Hashable {
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
