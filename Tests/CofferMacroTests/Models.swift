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

extension Note {
  /// A note with the given id and thread, other fields set to sample values.
  static func sample(_ id: Int64, thread: Int64 = 1, text: String = "hello", minutes: Double = 0) -> Note {
    Note(
      id: id, threadID: thread, text: text, date: Date(timeIntervalSince1970: 1_700_000_000 + minutes * 60),
      readAt: nil, slug: nil)
  }

  /// Notes that exercise every field, nulls included.
  static let variety: [Note] = [
    Note(
      id: 1, threadID: 7, text: "Hello", date: Date(timeIntervalSince1970: 1_700_000_000.25),
      readAt: Date(timeIntervalSince1970: 1_700_000_100), slug: "hello", mood: .busy, score: -1.5, flag: true,
      count: 42, attachment: Attachment(name: "a.png", sizes: [1, 2]), tags: ["x", "y"],
      data: Data([1, 2, 3]),
      link: URL(string: "https://example.com/a?b=c"), isSelected: true),
    Note(id: 2, threadID: 7, text: "", date: Date(timeIntervalSince1970: 0), readAt: nil, slug: nil),
  ]
}

/// A model with private stored properties, which the generated code may read and write.
@Storable
struct Secretive: Hashable {
  var id: Int64
  private var secret = "hidden"
  private(set) var revision = 0

  init(id: Int64, secret: String) {
    self.id = id
    self.secret = secret
  }

  /// The private value, for tests.
  var revealed: String { secret }
}

/// A generic model: its entity name is the specialized type's name, as for a Codable model.
@Storable
struct Box<Content: Codable & Sendable & Hashable>: Hashable {
  var id: String
  var content: Content
}

/// A model converted from plain Codable: its own CodingKeys rename a field and leave one out.
@Storable
struct Legacy: Hashable {
  var id: String
  var title: String
  var cached: [String] = []

  enum CodingKeys: String, CodingKey {
    case id = "key"
    case title
  }
}
