import Coffer
import Foundation

/// A conversation, as app code sees it.
///
/// App code, and ``ChatService``, depend on this protocol rather than on a concrete type, so
/// the type that holds a thread — and the store that keeps it — can change without touching
/// them. ``ChatThread`` is the plain value type that conforms.
///
/// A conforming type that is also `Storable` must store its properties under their own names
/// (the names ``ThreadFields`` lists), which the synthesized `Codable` conformance does.
public protocol ThreadProtocol: Identifiable, Sendable where ID == UUID {
  /// The thread's identity, stable for its whole life.
  var id: UUID { get }
  /// What the conversation is about, shown in a thread list.
  var title: String { get }
  /// When the thread was started.
  var createdAt: Date { get }

  /// A thread from its parts; ``ChatService`` uses it to create threads.
  init(id: UUID, title: String, createdAt: Date)
}

/// The stored fields of a thread, for queries written against ``ThreadProtocol``.
public enum ThreadFields {
  /// The thread's title.
  public static let title = FieldRef("title")
  /// When the thread was started.
  public static let createdAt = FieldRef("createdAt")
}
