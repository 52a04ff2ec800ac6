import Coffer
import Foundation

/// The chat app's migration plan: what takes a store the first release wrote
/// (``ChatThreadVersion1``, ``ChatMessageVersion1``) to the model of this one
/// (``ChatThread``, ``ChatMessage``). Open the store with it before using the model:
///
/// ```swift
/// let store = try await Store.open(url: url, registry: .builtIn, migrating: ChatMigrations.plan)
/// ```
///
/// A store made by this release records no step and has no version-1 entities; the steps then
/// find nothing to change — so a new store is opened with the plan too, and marked as migrated
/// before its first value is written.
public enum ChatMigrations {
  /// Version 1 → 2: two fields renamed, one changed from 0/1 to a Boolean (and renamed), and a
  /// thread's `label` split into a title and a date.
  public static let plan = MigrationPlan([
    .onlyIfStored("chat-2-message-sender", entity: "ChatMessage", field: "author") {
      .renameField($0, entity: "ChatMessage", from: "author", to: "sender")
    },
    .onlyIfStored("chat-2-message-text", entity: "ChatMessage", field: "body") {
      .renameField($0, entity: "ChatMessage", from: "body", to: "text")
    },
    .onlyIfStored("chat-2-message-read-bool", entity: "ChatMessage", field: "read") {
      .changeKind($0, entity: "ChatMessage", field: "read", to: .bool, using: .intToBool)
    },
    .onlyIfStored("chat-2-message-is-read", entity: "ChatMessage", field: "read") {
      .renameField($0, entity: "ChatMessage", from: "read", to: "isRead")
    },
    .onlyIfStored("chat-2-thread-split-label", entity: "ChatThread", field: "label") { name in
      .custom(name, summary: "split ChatThread.label into title and createdAt") { context in
        let old = try context.schema(of: "ChatThread")
        let new = try EntitySchema(
          name: "ChatThread",
          fields: [Field("id", .uuid), Field("title", .string), Field("createdAt", .date)],
          idField: "id", indexes: old.indexes)
        let threads = try DynamicEntity(schema: new)
        let parser = ISO8601DateFormatter()
        try context.rewrite("ChatThread", as: new) { thread in
          guard case .string(let label)? = thread["label"], let bar = label.lastIndex(of: "|"),
            let date = parser.date(from: String(label[label.index(after: bar)...]))
          else {
            throw CofferError(
              .invalidValue, "A version-1 thread label is not TITLE|TIME.", entity: "ChatThread",
              field: "label")
          }
          return try DynamicRecord(
            threads,
            attributes: [
              "id": thread["id"] ?? .null, "title": .string(String(label[..<bar])), "createdAt": .date(date),
            ])
        }
      }
    },
  ])
}

extension MigrationStep {
  /// The step `make` gives, run only when the store holds `field` of `entity` — so the chat
  /// plan changes nothing in a store this release created.
  fileprivate static func onlyIfStored(
    _ name: String, entity: String, field: String, _ make: (String) -> MigrationStep
  ) -> MigrationStep {
    let step = make(name)
    return .custom(name, summary: step.summary) { context in
      guard try context.hasEntity(entity), try context.schema(of: entity).position(of: field) != nil else {
        return
      }
      try step.run(context)
    }
  }
}
