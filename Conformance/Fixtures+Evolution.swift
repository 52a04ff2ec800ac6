@_spi(Backend) import Coffer
import CofferMacros
import Foundation

// Versions of one entity, "Person", for the schema-evolution checks.

/// The first version of Person.
@Storable
struct PersonV1: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
}

/// Person with a new optional field.
@Storable
struct PersonAddsOptional: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
  var nickname: String?
}

/// Person with a new required field that has a default.
@Storable
struct PersonAddsDefault: Equatable {
  static var entityName: String { "Person" }
  static var fieldDefaults: [String: Value] { ["level": .int(7)] }
  var id: Int64
  var name: String
  var age: Int64
  var level: Int64
}

/// Person with a new required field that has no default.
@Storable
struct PersonAddsRequired: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
  var email: String
}

/// Person without its `age` field.
@Storable
struct PersonDropsAge: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
}

/// Person whose `age` changed from an integer to a string.
@Storable
struct PersonRetypesAge: Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: String
}

/// An entity "Badge" whose optional `code` is unique.
@Storable
struct BadgeV1: Equatable {
  static var entityName: String { "Badge" }
  var id: Int64
  @Unique var code: Int64?
}

/// Badge whose `code` became required, with the default 5: rows with no code all take 5.
@Storable
struct BadgeRequiresCode: Equatable {
  static var entityName: String { "Badge" }
  static var fieldDefaults: [String: Value] { ["code": .int(5)] }
  var id: Int64
  @Unique var code: Int64
}

/// An entity "Label", first without any unique index.
@Storable
struct LabelV1: Equatable {
  static var entityName: String { "Label" }
  var id: Int64
  var text: String?
}

/// Label whose `text` became unique.
@Storable
struct LabelUniqueText: Equatable {
  static var entityName: String { "Label" }
  var id: Int64
  @Unique var text: String?
}

/// Label with string ids, first without any unique index.
@Storable
struct NamedLabelV1: Equatable {
  static var entityName: String { "NamedLabel" }
  var id: String
  var text: String?
}

/// NamedLabel whose `text` became unique.
@Storable
struct NamedLabelUniqueText: Equatable {
  static var entityName: String { "NamedLabel" }
  var id: String
  @Unique var text: String?
}

/// An entity "Blob" holding optional bytes.
@Storable
struct BlobV1: Equatable {
  static var entityName: String { "Blob" }
  var id: Int64
  var blob: Data?
}

/// Blob with a new optional field.
@Storable
struct BlobAddsNote: Equatable {
  static var entityName: String { "Blob" }
  var id: Int64
  var blob: Data?
  var note: String?
}
