import CofferMacros
import Foundation
import Testing

@Suite struct GeneratedSchema {
  @Test func equalsTheCodableDerivedSchema() throws {
    #expect(try EntitySchema(for: Note.self) == EntitySchema(probing: Note.self))
    #expect(try EntitySchema(for: Person.self) == EntitySchema(probing: Person.self))
  }
}
