import Coffer
import Foundation

/// A chat message, as app code sees it.
///
/// App code, and ``ChatService``, depend on this protocol rather than on a concrete type, so
/// the type that holds a message — and the store that keeps it — can change without touching
/// them. ``ChatMessage`` is the plain value type that conforms.
///
/// A conforming type that is also `Storable` must store its properties under their own names
/// (the names ``MessageFields`` lists), as `@Storable` and the synthesized `Codable` conformance
/// both do. Code generic over the protocol names fields with ``MessageFields``: a key path
/// through a protocol requirement is not the conforming type's stored property, so key-path
/// queries are for code that knows the concrete type.
public protocol MessageProtocol: Identifiable, Sendable where ID == UUID {
  /// The message's identity.
  var id: UUID { get }
  /// The thread the message belongs to.
  var threadID: UUID { get }
  /// Who wrote it.
  var sender: String { get }
  /// What it says.
  var text: String { get }
  /// When it was posted.
  var date: Date { get }
  /// Whether the reader has seen it.
  var isRead: Bool { get set }

  /// A message from its parts; ``ChatService`` uses it to post messages.
  init(id: UUID, threadID: UUID, sender: String, text: String, date: Date, isRead: Bool)
}

/// The stored fields of a message, for queries written against ``MessageProtocol``.
public enum MessageFields {
  /// The thread the message belongs to.
  public static let threadID = FieldRef("threadID")
  /// Who wrote it.
  public static let sender = FieldRef("sender")
  /// What it says.
  public static let text = FieldRef("text")
  /// When it was posted.
  public static let date = FieldRef("date")
  /// Whether the reader has seen it.
  public static let isRead = FieldRef("isRead")
}
