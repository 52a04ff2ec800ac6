@_spi(Backend) import Coffer
import CofferMacroSupport
import Foundation

// The models the checks share. Each check makes fresh stores, so models never collide.
//
// They are @Storable models, so every check runs twice (see ``ConformanceTarget/rowCodecs``):
// once with the generated schema and row codec, and once with the schema and codec derived from
// their synthesized Codable conformance, exactly as for a plain Codable model.
//
// So that this library builds without swift-syntax, they do not use the macro: the code @Storable
// would generate is written out after each model (and the CodingKeys it adds, inside OddNames),
// and the field markers it reads are comments (`/* @Unique */ var email`). That code is exactly
// the macro's expansion: Tests/CofferMacroTests/ConformanceModelExpansionTests.swift expands
// @Storable on each model and fails when they differ. After changing a model or the macro, paste
// the expansion that test prints rather than editing the code by hand. Its members are public, as
// the macro writes them, so each extension turns off the rule that wants doc comments on them.

/// A general record with nullable fields of several kinds.
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

// What `@Storable` generates for Item, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Item: Storable, KeyPathStorable {
  public static var entityName: String {
    "Item"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("rank", \Self.rank, in: entity),
      CofferMacroSupport.StoredField.field("score", \Self.score, in: entity),
      CofferMacroSupport.StoredField.field("flag", \Self.flag, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.rank, "rank", in: entity),
        CofferMacroSupport.StoredField.value(self.score, "score", in: entity),
        CofferMacroSupport.StoredField.value(self.flag, "flag", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: Int64? = try reader.read(2, "rank")
    let value3: Double? = try reader.read(3, "score")
    let value4: Bool = try reader.read(4, "flag")
    self.id = value0
    self.name = value1
    self.rank = value2
    self.score = value3
    self.flag = value4
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.rank:
      "rank"
    case \Self.score:
      "score"
    case \Self.flag:
      "flag"
    default:
      nil
    }
  }
}

/// A record with a unique, nullable email.
struct Account: Equatable {
  var id: Int64
  /* @Unique */ var email: String?
  var name: String
}

// What `@Storable` generates for Account, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Account: Storable, KeyPathStorable {
  public static var entityName: String {
    "Account"
  }

  public static var indexes: [Coffer.Index] {
    [.unique("email")]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("email", \Self.email, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.email, "email", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String? = try reader.read(1, "email")
    let value2: String = try reader.read(2, "name")
    self.id = value0
    self.email = value1
    self.name = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.email:
      "email"
    case \Self.name:
      "name"
    default:
      nil
    }
  }
}

/// A record with a string id.
struct Tag: Equatable {
  var id: String
  var count: Int64
}

// What `@Storable` generates for Tag, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Tag: Storable, KeyPathStorable {
  public static var entityName: String {
    "Tag"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("count", \Self.count, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.count, "count", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: String = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "count")
    self.id = value0
    self.count = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.count:
      "count"
    default:
      nil
    }
  }
}

/// A record with a UUID id.
struct Token: Equatable {
  var id: UUID
  var count: Int64
}

// What `@Storable` generates for Token, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Token: Storable, KeyPathStorable {
  public static var entityName: String {
    "Token"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("count", \Self.count, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.count, "count", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: UUID = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "count")
    self.id = value0
    self.count = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.count:
      "count"
    default:
      nil
    }
  }
}

/// A record holding one nullable value of each ordered kind, for ordering checks.
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

// What `@Storable` generates for Cell, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Cell: Storable, KeyPathStorable {
  public static var entityName: String {
    "Cell"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
      CofferMacroSupport.StoredField.field("date", \Self.date, in: entity),
      CofferMacroSupport.StoredField.field("uuid", \Self.uuid, in: entity),
      CofferMacroSupport.StoredField.field("bytes", \Self.bytes, in: entity),
      CofferMacroSupport.StoredField.field("double", \Self.double, in: entity),
      CofferMacroSupport.StoredField.field("bool", \Self.bool, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
        CofferMacroSupport.StoredField.value(self.date, "date", in: entity),
        CofferMacroSupport.StoredField.value(self.uuid, "uuid", in: entity),
        CofferMacroSupport.StoredField.value(self.bytes, "bytes", in: entity),
        CofferMacroSupport.StoredField.value(self.double, "double", in: entity),
        CofferMacroSupport.StoredField.value(self.bool, "bool", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String? = try reader.read(1, "text")
    let value2: Date? = try reader.read(2, "date")
    let value3: UUID? = try reader.read(3, "uuid")
    let value4: Data? = try reader.read(4, "bytes")
    let value5: Double? = try reader.read(5, "double")
    let value6: Bool? = try reader.read(6, "bool")
    self.id = value0
    self.text = value1
    self.date = value2
    self.uuid = value3
    self.bytes = value4
    self.double = value5
    self.bool = value6
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.text:
      "text"
    case \Self.date:
      "date"
    case \Self.uuid:
      "uuid"
    case \Self.bytes:
      "bytes"
    case \Self.double:
      "double"
    case \Self.bool:
      "bool"
    default:
      nil
    }
  }
}

/// A record holding an unsigned integer, to check the Int64 range.
struct Counter: Equatable {
  var id: Int64
  var big: UInt64
}

// What `@Storable` generates for Counter, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Counter: Storable, KeyPathStorable {
  public static var entityName: String {
    "Counter"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("big", \Self.big, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.big, "big", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: UInt64 = try reader.read(1, "big")
    self.id = value0
    self.big = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.big:
      "big"
    default:
      nil
    }
  }
}

/// A record whose two rows a batch always changes together, for atomicity under concurrency.
struct Versioned: Equatable {
  var id: Int64
  var version: Int64
}

// What `@Storable` generates for Versioned, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Versioned: Storable, KeyPathStorable {
  public static var entityName: String {
    "Versioned"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("version", \Self.version, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.version, "version", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "version")
    self.id = value0
    self.version = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.version:
      "version"
    default:
      nil
    }
  }
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

// What `@Storable` generates for Sample, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension Sample: Storable, KeyPathStorable {
  public static var entityName: String {
    "Sample"
  }

  public static var fieldDefaults: [String: Coffer.Value] {
    var defaults: [String: Coffer.Value] = [:]
    defaults["flag"] = CofferMacroSupport.StoredField.defaultValue(\Self.flag, false, in: Self.entityName)
    defaults["int"] = CofferMacroSupport.StoredField.defaultValue(\Self.int, 0, in: Self.entityName)
    defaults["double"] = CofferMacroSupport.StoredField.defaultValue(\Self.double, 0.0, in: Self.entityName)
    defaults["text"] = CofferMacroSupport.StoredField.defaultValue(\Self.text, "", in: Self.entityName)
    defaults["color"] = CofferMacroSupport.StoredField.defaultValue(
      \Self.color, Color.red, in: Self.entityName)
    defaults["level"] = CofferMacroSupport.StoredField.defaultValue(
      \Self.level, Level.low, in: Self.entityName)
    return defaults
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("flag", \Self.flag, in: entity),
      CofferMacroSupport.StoredField.field("int", \Self.int, in: entity),
      CofferMacroSupport.StoredField.field("double", \Self.double, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
      CofferMacroSupport.StoredField.field("bytes", \Self.bytes, in: entity),
      CofferMacroSupport.StoredField.field("date", \Self.date, in: entity),
      CofferMacroSupport.StoredField.field("uuid", \Self.uuid, in: entity),
      CofferMacroSupport.StoredField.field("optionalText", \Self.optionalText, in: entity),
      CofferMacroSupport.StoredField.field("document", \Self.document, in: entity),
      CofferMacroSupport.StoredField.field("color", \Self.color, in: entity),
      CofferMacroSupport.StoredField.field("level", \Self.level, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.flag, "flag", in: entity),
        CofferMacroSupport.StoredField.value(self.int, "int", in: entity),
        CofferMacroSupport.StoredField.value(self.double, "double", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
        CofferMacroSupport.StoredField.value(self.bytes, "bytes", in: entity),
        CofferMacroSupport.StoredField.value(self.date, "date", in: entity),
        CofferMacroSupport.StoredField.value(self.uuid, "uuid", in: entity),
        CofferMacroSupport.StoredField.value(self.optionalText, "optionalText", in: entity),
        CofferMacroSupport.StoredField.value(self.document, "document", in: entity),
        CofferMacroSupport.StoredField.value(self.color, "color", in: entity),
        CofferMacroSupport.StoredField.value(self.level, "level", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    self.id = try reader.read(0, "id")
    self.flag = try reader.read(1, "flag")
    self.int = try reader.read(2, "int")
    self.double = try reader.read(3, "double")
    self.text = try reader.read(4, "text")
    self.bytes = try reader.read(5, "bytes")
    self.date = try reader.read(6, "date")
    self.uuid = try reader.read(7, "uuid")
    self.optionalText = try reader.read(8, "optionalText")
    self.document = try reader.read(9, "document")
    self.color = try reader.read(10, "color")
    self.level = try reader.read(11, "level")
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.flag:
      "flag"
    case \Self.int:
      "int"
    case \Self.double:
      "double"
    case \Self.text:
      "text"
    case \Self.bytes:
      "bytes"
    case \Self.date:
      "date"
    case \Self.uuid:
      "uuid"
    case \Self.optionalText:
      "optionalText"
    case \Self.document:
      "document"
    case \Self.color:
      "color"
    case \Self.level:
      "level"
    default:
      nil
    }
  }
}

/// An entity and fields named with Unicode, quotes, spaces, punctuation and SQL keywords.
struct OddNames: Equatable {
  static var entityName: String { "Ünïcødé \"order\" table; DROP TABLE x; --" }
  /* @StoredName("select") */ var id: String
  /* @StoredName("from \"where\" 'group'") */ var value: Int64
  /* @StoredName("🙂 ordér by, ? $1 :x %s") */ var note: String?

  // What `@Storable` adds to OddNames for its stored names.
  enum CodingKeys: String, CodingKey {
    case id = "select"
    case value = "from \"where\" 'group'"
    case note = "🙂 ordér by, ? $1 :x %s"
  }
}

// What `@Storable` generates for OddNames, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension OddNames: Storable, KeyPathStorable {
  public static var idField: String {
    "select"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("select", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("from \"where\" 'group'", \Self.value, in: entity),
      CofferMacroSupport.StoredField.field("🙂 ordér by, ? $1 :x %s", \Self.note, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "select", in: entity),
        CofferMacroSupport.StoredField.value(self.value, "from \"where\" 'group'", in: entity),
        CofferMacroSupport.StoredField.value(self.note, "🙂 ordér by, ? $1 :x %s", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: String = try reader.read(0, "select")
    let value1: Int64 = try reader.read(1, "from \"where\" 'group'")
    let value2: String? = try reader.read(2, "🙂 ordér by, ? $1 :x %s")
    self.id = value0
    self.value = value1
    self.note = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "select"
    case \Self.value:
      "from \"where\" 'group'"
    case \Self.note:
      "🙂 ordér by, ? $1 :x %s"
    default:
      nil
    }
  }
}

/// The entity `order`, distinct from ``UpperOrder``'s `Order`.
struct LowerOrder: Equatable {
  static var entityName: String { "order" }
  var id: Int64
  var total: Int64
}

// What `@Storable` generates for LowerOrder, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension LowerOrder: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("total", \Self.total, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.total, "total", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "total")
    self.id = value0
    self.total = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.total:
      "total"
    default:
      nil
    }
  }
}

/// The entity `Order`, distinct from ``LowerOrder``'s `order`.
struct UpperOrder: Equatable {
  static var entityName: String { "Order" }
  var id: Int64
  var label: String
}

// What `@Storable` generates for UpperOrder, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension UpperOrder: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("label", \Self.label, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.label, "label", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "label")
    self.id = value0
    self.label = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.label:
      "label"
    default:
      nil
    }
  }
}

/// Two fields whose names differ only in case.
struct CaseFields: Equatable {
  var id: Int64
  var name: String
  var Name: String
}

// What `@Storable` generates for CaseFields, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension CaseFields: Storable, KeyPathStorable {
  public static var entityName: String {
    "CaseFields"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("Name", \Self.Name, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.Name, "Name", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: String = try reader.read(2, "Name")
    self.id = value0
    self.name = value1
    self.Name = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.Name:
      "Name"
    default:
      nil
    }
  }
}
