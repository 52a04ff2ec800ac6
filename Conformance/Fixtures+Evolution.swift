import Coffer

// Versions of one entity, "Person", for the schema-evolution checks.

/// The first version of Person.
struct PersonV1: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
}

/// Person with a new optional field.
struct PersonAddsOptional: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
  var nickname: String?
}

/// Person with a new required field that has a default.
struct PersonAddsDefault: Storable, Equatable {
  static var entityName: String { "Person" }
  static var fieldDefaults: [String: Value] { ["level": .int(7)] }
  var id: Int64
  var name: String
  var age: Int64
  var level: Int64
}

/// Person with a new required field that has no default.
struct PersonAddsRequired: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: Int64
  var email: String
}

/// Person without its `age` field.
struct PersonDropsAge: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
}

/// Person whose `age` changed from an integer to a string.
struct PersonRetypesAge: Storable, Equatable {
  static var entityName: String { "Person" }
  var id: Int64
  var name: String
  var age: String
}
