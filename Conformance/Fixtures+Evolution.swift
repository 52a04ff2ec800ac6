import Coffer
import CofferMacros

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
