import Coffer
import CofferMacros
import Foundation

/// The benchmark's one workload: chat messages in 200 threads, made before any timing starts.
/// Declared with `@Storable`, as the README recommends; the suite also runs each Coffer backend
/// with the codec derived from `Codable` for the same type, to show what the macro saves.
@Storable
struct ChatMessage: Equatable {
  var id: Int64
  var threadID: Int64
  var sender: String
  var text: String
  var date: Date
  var isRead: Bool

  static var indexes: [Index] { [.on("threadID", "date")] }
}

/// A small deterministic generator so every run benchmarks the same data.
struct SplitMix64 {
  var state: UInt64
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  mutating func below(_ bound: Int) -> Int { Int(next() % UInt64(bound)) }
}

enum Workload {
  static let threads = 200
  private static let words = [
    "coffer", "store", "thread", "message", "swift", "value", "query", "index", "batch", "page", "sorted",
    "quick",
    "durable", "atomic", "plist", "reader", "writer", "commit", "schema", "field",
  ]

  static func messages(_ count: Int, seed: UInt64 = 42) -> [ChatMessage] {
    var random = SplitMix64(state: seed)
    let start = Date(timeIntervalSince1970: 1_700_000_000)
    return (0..<count).map { index in
      var text = ""
      while text.utf8.count < 120 { text += words[random.below(words.count)] + " " }
      return ChatMessage(
        id: Int64(index + 1), threadID: Int64(random.below(threads)),
        sender: "user\(String(format: "%06d", random.below(1_000_000)))",
        text: String(text.prefix(120)),
        date: start.addingTimeInterval(Double(index) + Double(random.below(1_000_000)) / 1e6),
        isRead: random.below(2) == 0)
    }
  }

  /// Every tenth message, and the same messages edited (text reversed, read flag toggled): the
  /// two versions the update of 10 % alternates between.
  static func tenthAndEdited(_ messages: [ChatMessage]) -> (tenth: [ChatMessage], edited: [ChatMessage]) {
    let tenth = stride(from: 0, to: messages.count, by: 10).map { messages[$0] }
    let edited = tenth.map { message in
      var copy = message
      copy.text = String(copy.text.reversed())
      copy.isRead.toggle()
      return copy
    }
    return (tenth, edited)
  }
}
