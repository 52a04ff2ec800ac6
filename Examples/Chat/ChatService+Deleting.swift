import Coffer
import Foundation

/// Removing threads.
extension ChatService {
  /// What deleting a thread removed.
  public struct ThreadDeletion: Sendable, Hashable {
    /// Whether the thread itself was stored.
    public var threadRemoved: Bool
    /// How many of its messages were removed.
    public var messagesRemoved: Int
  }

  /// Deletes a thread and all its messages in one batch: either all of them go, or — if the
  /// store fails — none do. Deleting a thread that is not stored removes nothing.
  ///
  /// ``ChatMessage`` declares its `threadID` a cascading reference (`@Reference`), so the store
  /// would delete its messages with the thread by itself, in the same batch; the explicit
  /// delete of the messages keeps the service correct over message types that declare none.
  @discardableResult
  public func deleteThread(_ threadID: UUID) async throws -> ThreadDeletion {
    let threadStored = try await store.get(ThreadValue.self, id: threadID) != nil
    let summary = try await store.batch(for: [ThreadValue.self, MessageValue.self]) { batch in
      try batch.deleteAll(MessageValue.self, where: MessageFields.threadID == threadID)
      try batch.delete(ThreadValue.self, id: threadID)
    }
    let threadRemoved = threadStored && summary.deleted > 0
    return ThreadDeletion(
      threadRemoved: threadRemoved, messagesRemoved: summary.deleted - (threadRemoved ? 1 : 0))
  }
}
