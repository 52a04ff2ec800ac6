/// A plain `[Int64: ChatMessage]`: what the memory backend is measured against. A thread page
/// has no index to use, so it filters and sorts every message, as code without a store would.
final class DictionarySystem: BenchSystem {
  let name = "Dictionary"
  let isDurable = false
  private var messages: [Int64: ChatMessage] = [:]

  func create(in folder: String) async throws { messages = [:] }

  func bulkInsert(_ batch: [ChatMessage]) async throws {
    messages.reserveCapacity(batch.count)
    for message in batch { messages[message.id] = message }
  }

  func get(_ id: Int64) async throws -> ChatMessage? { messages[id] }

  func threadPage(_ thread: Int64) async throws -> [ChatMessage] {
    let inThread = messages.values.filter { $0.threadID == thread }
    return Array(inThread.sorted { ($0.date, $1.id) > ($1.date, $0.id) }.prefix(50))
  }

  func scan() async throws -> [ChatMessage] { Array(messages.values) }

  func update(_ batch: [ChatMessage]) async throws {
    for message in batch { messages[message.id] = message }
  }

  func commit(_ message: ChatMessage) async throws { messages[message.id] = message }

  func fileSize() -> Int64 { 0 }

  func close() async throws { messages = [:] }
}
