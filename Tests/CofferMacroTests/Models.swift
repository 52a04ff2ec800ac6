import CofferMacros
import Foundation

/// A colour stored as its raw value.
enum Mood: String, Codable, Sendable, CaseIterable, ValueConvertible { case calm, busy }

/// A nested Codable value stored as a document.
struct Attachment: Codable, Sendable, Hashable {
  var name: String
  var sizes: [Int]
}

/// A model with a field of most kinds, markers and defaults.
@Storable
struct Note: Hashable {
  var id: Int64
  @Indexed var threadID: Int64
  @StoredName("body") var text: String
  var date: Date
  var readAt: Date?
  @Unique var slug: String?
  var mood = Mood.calm
  var score = 0.5
  var flag = false
  var count: UInt32 = 7
  var attachment: Attachment?
  var tags: [String] = []
  var data = Data()
  var link: URL?
  @Transient var isSelected = false

  var preview: String { String(text.prefix(10)) }
}

/// A model whose id is another property, with an entity name of its own.
@Storable(entity: "Person", id: "personID")
struct Person: Hashable {
  var personID: UUID
  var name: String
}
