@_spi(Backend) import Coffer
import Testing

@Suite struct SchemaEvolutionTests {
  func schema(_ fields: [Field]) throws -> EntitySchema {
    try EntitySchema(name: "Person", fields: [Field("id", .int)] + fields, idField: "id")
  }

  @Test func newOptionalFieldReadsNullAndNewDefaultedFieldReadsItsDefault() throws {
    let stored = try schema([Field("name", .string)])
    let declared = try schema([
      Field("name", .string), Field("age", .int, isOptional: true), Field("active", .bool, default: true),
    ])
    let evolution = try SchemaEvolution(from: stored, to: declared)
    #expect(evolution.migrate(Row([1, "Ann"])) == Row([1, "Ann", nil, true]))
  }

  @Test func droppedFieldIsIgnored() throws {
    let evolution = try SchemaEvolution(
      from: try schema([Field("name", .string), Field("old", .int)]), to: try schema([Field("name", .string)])
    )
    #expect(evolution.migrate(Row([1, "Ann", 9])) == Row([1, "Ann"]))
  }

  @Test func changedKindIsAMismatchNamingEntityFieldAndBothKinds() throws {
    #expect {
      try SchemaEvolution(from: try schema([Field("age", .int)]), to: try schema([Field("age", .string)]))
    } throws: { error in
      guard let error = error as? CofferError else { return false }
      return error.code == .schemaMismatch && error.entity == "Person" && error.field == "age"
        && error.message.contains("stored as int") && error.message.contains("declared as string")
    }
  }

  @Test func newRequiredFieldWithoutDefaultIsAMismatch() throws {
    #expect(throws: CofferError.self) {
      try SchemaEvolution(from: try schema([]), to: try schema([Field("name", .string)]))
    }
  }

  @Test func idChangeIsAMismatch() throws {
    let stored = try EntitySchema(name: "P", fields: [Field("id", .int)], idField: "id")
    let declared = try EntitySchema(name: "P", fields: [Field("id", .string)], idField: "id")
    #expect(throws: CofferError.self) { try SchemaEvolution(from: stored, to: declared) }
  }

  @Test func malformedSchemasAreRejected() {
    #expect(throws: CofferError.self) {
      try EntitySchema(name: "X", fields: [Field("id", .int), Field("id", .string)], idField: "id")
    }
    #expect(throws: CofferError.self) {
      try EntitySchema(name: "X", fields: [Field("a", .int)], idField: "id")
    }
    #expect(throws: CofferError.self) {
      try EntitySchema(name: "X", fields: [Field("id", .double)], idField: "id")
    }
    #expect(throws: CofferError.self) {
      try EntitySchema(name: "X", fields: [Field("id", .int, isOptional: true)], idField: "id")
    }
    #expect(throws: CofferError.self) {
      try EntitySchema(
        name: "X", fields: [Field("id", .int), Field("d", .document)], idField: "id", indexes: [.on("d")])
    }
  }
}
