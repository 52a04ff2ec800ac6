@_spi(Backend) import Coffer
import CofferMacroSupport
import Foundation

// The models of the reference checks (Checks+References.swift), written out as the other
// fixtures are (see Fixtures.swift): `@Reference` markers are comments, and the code
// `@Storable` generates for them follows each model.

/// A thread that messages, notes, pins and loose links refer to.
struct RefThread: Equatable {
  var id: Int64
  var title: String
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefThread: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefThread"
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("title", \Self.title, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.title, "title", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: String = try reader.read(1, "title")
    self.id = value0
    self.title = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.title:
      "title"
    default:
      nil
    }
  }
}

/// A message of a thread, deleted with it.
struct RefMessage: Equatable {
  var id: Int64
  /* @Reference(RefThread.self, onDelete: .cascade) */ var threadID: Int64
  var text: String
  var read: Bool
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefMessage: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefMessage"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefThread.self, by: "threadID", onDelete: .cascade)
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("threadID", \Self.threadID, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
      CofferMacroSupport.StoredField.field("read", \Self.read, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.threadID, "threadID", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
        CofferMacroSupport.StoredField.value(self.read, "read", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "threadID")
    let value2: String = try reader.read(2, "text")
    let value3: Bool = try reader.read(3, "read")
    self.id = value0
    self.threadID = value1
    self.text = value2
    self.read = value3
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.threadID:
      "threadID"
    case \Self.text:
      "text"
    case \Self.read:
      "read"
    default:
      nil
    }
  }
}

/// A note whose thread reference is cleared when the thread is deleted.
struct RefNote: Equatable {
  var id: Int64
  /* @Reference(RefThread.self, onDelete: .nullify) */ var threadID: Int64?
  var text: String
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefNote: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefNote"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefThread.self, by: "threadID", onDelete: .nullify)
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("threadID", \Self.threadID, in: entity),
      CofferMacroSupport.StoredField.field("text", \Self.text, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.threadID, "threadID", in: entity),
        CofferMacroSupport.StoredField.value(self.text, "text", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64? = try reader.read(1, "threadID")
    let value2: String = try reader.read(2, "text")
    self.id = value0
    self.threadID = value1
    self.text = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.threadID:
      "threadID"
    case \Self.text:
      "text"
    default:
      nil
    }
  }
}

/// A pin: a thread with pins cannot be deleted.
struct RefPin: Equatable {
  var id: Int64
  /* @Reference(RefThread.self, onDelete: .deny) */ var threadID: Int64
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefPin: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefPin"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefThread.self, by: "threadID", onDelete: .deny)
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("threadID", \Self.threadID, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.threadID, "threadID", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "threadID")
    self.id = value0
    self.threadID = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.threadID:
      "threadID"
    default:
      nil
    }
  }
}

/// A link whose rule is none: never checked.
struct RefLoose: Equatable {
  var id: Int64
  /* @Reference(RefThread.self, onDelete: .none) */ var threadID: Int64
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefLoose: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefLoose"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefThread.self, by: "threadID", onDelete: .none)
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("threadID", \Self.threadID, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.threadID, "threadID", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "threadID")
    self.id = value0
    self.threadID = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.threadID:
      "threadID"
    default:
      nil
    }
  }
}

/// An attachment of a message, deleted with it: thread → message → attachment cascades.
struct RefAttachment: Equatable {
  var id: Int64
  /* @Reference(RefMessage.self, onDelete: .cascade) */ var messageID: Int64
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefAttachment: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefAttachment"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefMessage.self, by: "messageID", onDelete: .cascade)
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("messageID", \Self.messageID, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.messageID, "messageID", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "messageID")
    self.id = value0
    self.messageID = value1
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.messageID:
      "messageID"
    default:
      nil
    }
  }
}

/// A tree node (or a cycle of them): deleting a node deletes the nodes under it.
struct RefNode: Equatable {
  var id: Int64
  /* @Reference(RefNode.self, onDelete: .cascade) */ var parentID: Int64?
  var name: String
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefNode: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefNode"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefNode.self, by: "parentID", onDelete: .cascade)
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("parentID", \Self.parentID, in: entity),
      CofferMacroSupport.StoredField.field("name", \Self.name, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.parentID, "parentID", in: entity),
        CofferMacroSupport.StoredField.value(self.name, "name", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: Int64 = try reader.read(0, "id")
    let value1: Int64? = try reader.read(1, "parentID")
    let value2: String = try reader.read(2, "name")
    self.id = value0
    self.parentID = value1
    self.name = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.parentID:
      "parentID"
    case \Self.name:
      "name"
    default:
      nil
    }
  }
}

/// A label that messages carry through RefLabeling.
struct RefLabel: Equatable {
  var id: String
  var name: String
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefLabel: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefLabel"
  }

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
    let value0: String = try reader.read(0, "id")
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

/// Links a message and a label (many-to-many), removed with either.
struct RefLabeling: Equatable {
  var id: String
  /* @Reference(RefMessage.self, onDelete: .cascade) */ var messageID: Int64
  /* @Reference(RefLabel.self, onDelete: .cascade) */ var labelID: String
}

// What `@Storable` generates, written out; ConformanceModelExpansionTests checks it.
// swift-format-ignore: AllPublicDeclarationsHaveDocumentation
extension RefLabeling: Storable, KeyPathStorable {
  public static var entityName: String {
    "RefLabeling"
  }

  public static var references: [Coffer.EntityReference] {
    [
      Coffer.EntityReference.to(RefMessage.self, by: "messageID", onDelete: .cascade),
      Coffer.EntityReference.to(RefLabel.self, by: "labelID", onDelete: .cascade),
    ]
  }

  public static func _storedFields() throws -> [Coffer.Field]? {
    let entity = Self.entityName
    return try [
      CofferMacroSupport.StoredField.field("id", \Self.id, in: entity),
      CofferMacroSupport.StoredField.field("messageID", \Self.messageID, in: entity),
      CofferMacroSupport.StoredField.field("labelID", \Self.labelID, in: entity),
    ]
  }

  public func _storedRow() throws -> Coffer.Row {
    let entity = Self.entityName
    return Coffer.Row(
      try [
        CofferMacroSupport.StoredField.value(self.id, "id", in: entity),
        CofferMacroSupport.StoredField.value(self.messageID, "messageID", in: entity),
        CofferMacroSupport.StoredField.value(self.labelID, "labelID", in: entity),
      ])
  }

  public init(_storedRow row: Coffer.StoredRow) throws {
    let reader = CofferMacroSupport.StoredRowReader(consume row, entity: Self.entityName, idPosition: 0)
    let value0: String = try reader.read(0, "id")
    let value1: Int64 = try reader.read(1, "messageID")
    let value2: String = try reader.read(2, "labelID")
    self.id = value0
    self.messageID = value1
    self.labelID = value2
  }

  public static func storedFieldName(for keyPath: PartialKeyPath<Self>) -> String? {
    switch keyPath {
    case \Self.id:
      "id"
    case \Self.messageID:
      "messageID"
    case \Self.labelID:
      "labelID"
    default:
      nil
    }
  }
}
