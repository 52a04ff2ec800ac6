@_spi(Backend) import Coffer
import CofferMacros
import Foundation

// The models the checks share. Each check makes fresh stores, so models never collide.
//
// They are declared with @Storable, so every check runs twice (see ``ConformanceTarget/rowCodecs``):
// once with the generated schema and row codec, and once with the schema and codec derived from
// their synthesized Codable conformance, exactly as for a plain Codable model.

/// A general record with nullable fields of several kinds.
@Storable
struct Item: Equatable {
  var id: Int64
  var name: String
  var rank: Int64?
  var score: Double?
  var flag: Bool

  /// Eight items covering nulls, ties, case, wildcards, infinities and the empty string.
  static let sample: [Item] = [
    Item(id: 1, name: "apple", rank: 3, score: 1.5, flag: true),
    Item(id: 2, name: "Banana", rank: nil, score: -2.0, flag: false),
    Item(id: 3, name: "cherry", rank: 1, score: nil, flag: true),
    Item(id: 4, name: "apple", rank: 3, score: 0.0, flag: false),
    Item(id: 5, name: "100%_off*", rank: 2, score: .infinity, flag: true),
    Item(id: 6, name: "", rank: nil, score: nil, flag: false),
    Item(id: 7, name: "ÉCLAIR", rank: 5, score: -.infinity, flag: true),
    Item(id: 8, name: "date", rank: 1, score: 2.5, flag: false),
  ]
}

/// A record with a unique, nullable email.
@Storable
struct Account: Equatable {
  var id: Int64
  @Unique var email: String?
  var name: String
}

/// A record with a string id.
@Storable
struct Tag: Equatable {
  var id: String
  var count: Int64
}

/// A record with a UUID id.
@Storable
struct Token: Equatable {
  var id: UUID
  var count: Int64
}

/// A record holding one nullable value of each ordered kind, for ordering checks.
@Storable
struct Cell: Equatable {
  var id: Int64
  var text: String?
  var date: Date?
  var uuid: UUID?
  var bytes: Data?
  var double: Double?
  var bool: Bool?

  init(
    id: Int64, text: String? = nil, date: Date? = nil, uuid: UUID? = nil, bytes: Data? = nil,
    double: Double? = nil, bool: Bool? = nil
  ) {
    self.id = id
    self.text = text
    self.date = date
    self.uuid = uuid
    self.bytes = bytes
    self.double = double
    self.bool = bool
  }
}

/// A record holding an unsigned integer, to check the Int64 range.
@Storable
struct Counter: Equatable {
  var id: Int64
  var big: UInt64
}

/// A record whose two rows a batch always changes together, for atomicity under concurrency.
@Storable
struct Versioned: Equatable {
  var id: Int64
  var version: Int64
}

/// A colour stored as its string raw value.
enum Color: String, Codable, Sendable, CaseIterable { case red, green, blue = "BLUE" }

/// A level stored as its integer raw value.
enum Level: Int, Codable, Sendable, CaseIterable { case low = 1, high = 10, extreme = -3 }

/// A nested document: arrays, dictionaries, optionals and nested structs.
struct Document: Codable, Sendable, Equatable {
  struct Part: Codable, Sendable, Equatable {
    var x: Double
    var tags: [String]?
  }
  var title = ""
  var numbers: [Int] = []
  var attributes: [String: String] = [:]
  var parts: [Part] = []
  var note: String?
}

/// A record with a field of every kind, including documents and enums.
@Storable
struct Sample: Equatable {
  var id: Int64
  var flag = false
  var int: Int64 = 0
  var double = 0.0
  var text = ""
  var bytes = Data()
  var date = Date(timeIntervalSince1970: 0)
  var uuid = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
  var optionalText: String?
  var document = Document()
  var color = Color.red
  var level = Level.low
}

/// An entity and fields named with Unicode, quotes, spaces, punctuation and SQL keywords.
@Storable
struct OddNames: Equatable {
  static var entityName: String { "Ünïcødé \"order\" table; DROP TABLE x; --" }
  @StoredName("select") var id: String
  @StoredName("from \"where\" 'group'") var value: Int64
  @StoredName("🙂 ordér by, ? $1 :x %s") var note: String?
}

/// The entity `order`, distinct from ``UpperOrder``'s `Order`.
@Storable
struct LowerOrder: Equatable {
  static var entityName: String { "order" }
  var id: Int64
  var total: Int64
}

/// The entity `Order`, distinct from ``LowerOrder``'s `order`.
@Storable
struct UpperOrder: Equatable {
  static var entityName: String { "Order" }
  var id: Int64
  var label: String
}

/// Two fields whose names differ only in case.
@Storable
struct CaseFields: Equatable {
  var id: Int64
  var name: String
  var Name: String
}
