@_spi(Backend) import Coffer
import CofferMacroSupport
import Foundation

// Versions of one entity, "Person", for the schema-evolution checks. Like the models of
// Fixtures.swift they are @Storable models written without the macro (see the note there): the
// code it would generate follows each model, and `/* @Unique */` stands for the marker.

/// The first version of Person.
struct PersonV1: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
}

// What `@Storable` generates for PersonV1, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension PersonV1: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("age", \Self.age, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.age, "age", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: Int64 = try reader.read(2, "age")
    self.id = value0
    self.name = value1
    self.age = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.age:
      "age"
    default:
      nil
    }
  }
}

/// Person with a new optional field.
struct PersonAddsOptional: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
  var nickname: String?
}

// What `@Storable` generates for PersonAddsOptional, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension PersonAddsOptional: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("age", \Self.age, in: entity),
      CofferMacroSupport.StoredField.field("nickname", \Self.nickname, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.age, "age", in: entity),
        CofferMacroSupport.StoredField.value(self.nickname, "nickname", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: Int64 = try reader.read(2, "age")
    let value3: String? = try reader.read(3, "nickname")
    self.id = value0
    self.name = value1
    self.age = value2
    self.nickname = value3
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.age:
      "age"
    case \Self.nickname:
      "nickname"
    default:
      nil
    }
  }
}

/// Person with a new required field that has a default.
struct PersonAddsDefault: Equatable {
  static var entityName: String { "Person" }
  static var fieldDefaults: [String: Value] { ["level": .int(7)] }
  var id: Int64
  var name: String
  var age: Int64
  var level: Int64
}

// What `@Storable` generates for PersonAddsDefault, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension PersonAddsDefault: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("age", \Self.age, in: entity),
      CofferMacroSupport.StoredField.field("level", \Self.level, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.age, "age", in: entity),
        CofferMacroSupport.StoredField.value(self.level, "level", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: Int64 = try reader.read(2, "age")
    let value3: Int64 = try reader.read(3, "level")
    self.id = value0
    self.name = value1
    self.age = value2
    self.level = value3
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.age:
      "age"
    case \Self.level:
      "level"
    default:
      nil
    }
  }
}

/// Person with a new required field that has no default.
struct PersonAddsRequired: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
  var email: String
}

// What `@Storable` generates for PersonAddsRequired, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension PersonAddsRequired: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("age", \Self.age, in: entity),
      CofferMacroSupport.StoredField.field("email", \Self.email, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.age, "age", in: entity),
        CofferMacroSupport.StoredField.value(self.email, "email", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: Int64 = try reader.read(2, "age")
    let value3: String = try reader.read(3, "email")
    self.id = value0
    self.name = value1
    self.age = value2
    self.email = value3
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.age:
      "age"
    case \Self.email:
      "email"
    default:
      nil
    }
  }
}

/// Person without its `age` field.
struct PersonDropsAge: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
}

// What `@Storable` generates for PersonDropsAge, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension PersonDropsAge: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    self.id = value0
    self.name = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    default:
      nil
    }
  }
}

/// Person whose `age` changed from an integer to a string.
struct PersonRetypesAge: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: String
}

// What `@Storable` generates for PersonRetypesAge, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension PersonRetypesAge: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
      CofferMacroSupport.StoredField.field("age", \Self.age, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
        CofferMacroSupport.StoredField.value(self.age, "age", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "name")
    let value2: String = try reader.read(2, "age")
    self.id = value0
    self.name = value1
    self.age = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.name:
      "name"
    case \Self.age:
      "age"
    default:
      nil
    }
  }
}

/// An entity "Badge" whose optional `code` is unique.
struct BadgeV1: Equatable {
  static var entityName: String { "Badge" }
  var id: Int64
  /* @Unique */ var code: Int64?
}

// What `@Storable` generates for BadgeV1, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension BadgeV1: Storable, KeyPathStorable {
  public static var indexes: [Coffer.Index] {
    [.unique("code")]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("code", \Self.code, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.code, "code", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64? = try reader.read(1, "code")
    self.id = value0
    self.code = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.code:
      "code"
    default:
      nil
    }
  }
}

/// Badge whose `code` became required, with the default 5: rows with no code all take 5.
struct BadgeRequiresCode: Equatable {
  static var entityName: String { "Badge" }
  static var fieldDefaults: [String: Value] { ["code": .int(5)] }
  var id: Int64
  /* @Unique */ var code: Int64
}

// What `@Storable` generates for BadgeRequiresCode, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension BadgeRequiresCode: Storable, KeyPathStorable {
  public static var indexes: [Coffer.Index] {
    [.unique("code")]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("code", \Self.code, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.code, "code", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "code")
    self.id = value0
    self.code = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.code:
      "code"
    default:
      nil
    }
  }
}

/// An entity "Label", first without any unique index.
struct LabelV1: Equatable {
  static var entityName: String { "Label" }
  var id: Int64
  var text: String?
}

// What `@Storable` generates for LabelV1, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension LabelV1: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String? = try reader.read(1, "text")
    self.id = value0
    self.text = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.text:
      "text"
    default:
      nil
    }
  }
}

/// Label whose `text` became unique.
struct LabelUniqueText: Equatable {
  static var entityName: String { "Label" }
  var id: Int64
  /* @Unique */ var text: String?
}

// What `@Storable` generates for LabelUniqueText, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension LabelUniqueText: Storable, KeyPathStorable {
  public static var indexes: [Coffer.Index] {
    [.unique("text")]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String? = try reader.read(1, "text")
    self.id = value0
    self.text = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.text:
      "text"
    default:
      nil
    }
  }
}

/// Label with string ids, first without any unique index.
struct NamedLabelV1: Equatable {
  static var entityName: String { "NamedLabel" }
  var id: String
  var text: String?
}

// What `@Storable` generates for NamedLabelV1, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension NamedLabelV1: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: String = try reader.read(0, "id")
    let value1: String? = try reader.read(1, "text")
    self.id = value0
    self.text = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.text:
      "text"
    default:
      nil
    }
  }
}

/// NamedLabel whose `text` became unique.
struct NamedLabelUniqueText: Equatable {
  static var entityName: String { "NamedLabel" }
  var id: String
  /* @Unique */ var text: String?
}

// What `@Storable` generates for NamedLabelUniqueText, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension NamedLabelUniqueText: Storable, KeyPathStorable {
  public static var indexes: [Coffer.Index] {
    [.unique("text")]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: String = try reader.read(0, "id")
    let value1: String? = try reader.read(1, "text")
    self.id = value0
    self.text = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.text:
      "text"
    default:
      nil
    }
  }
}

/// An entity "Blob" holding optional bytes.
struct BlobV1: Equatable {
  static var entityName: String { "Blob" }
  var id: Int64
  var blob: Data?
}

// What `@Storable` generates for BlobV1, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension BlobV1: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("blob", \Self.blob, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.blob, "blob", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Data? = try reader.read(1, "blob")
    self.id = value0
    self.blob = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.blob:
      "blob"
    default:
      nil
    }
  }
}

/// Blob with a new optional field.
struct BlobAddsNote: Equatable {
  static var entityName: String { "Blob" }
  var id: Int64
  var blob: Data?
  var note: String?
}

// What `@Storable` generates for BlobAddsNote, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension BlobAddsNote: Storable, KeyPathStorable {
  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("blob", \Self.blob, in: entity),
      CofferMacroSupport.StoredField.field("note", \Self.note, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.blob, "blob", in: entity),
        CofferMacroSupport.StoredField.value(self.note, "note", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Data? = try reader.read(1, "blob")
    let value2: String? = try reader.read(2, "note")
    self.id = value0
    self.blob = value1
    self.note = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.blob:
      "blob"
    case \Self.note:
      "note"
    default:
      nil
    }
  }
}
