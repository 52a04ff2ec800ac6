@_spi(Backend) import Coffer
import CofferMacros
import Foundation
import Testing

@Suite struct GeneratedSchema {
  @Test func equalsTheCodableDerivedSchema() throws {
    #expect(try EntitySchema(for: Note.self) == EntitySchema(probing: Note.self))
    #expect(try EntitySchema(for: Person.self) == EntitySchema(probing: Person.self))
  }
}

@Suite struct HandWrittenCodingKeys {
  @Test func storedNamesComeFromCodingKeysAndUnlistedPropertiesAreNotStored() throws {
    let schema = try EntitySchema(for: Legacy.self)
    #expect(schema == (try EntitySchema(probing: Legacy.self)))
    #expect(schema.fields.map(\.name) == ["key", "title"])
    #expect(Legacy.idField == "key")
    let codec = try EntityCodec<Legacy>()
    let decoded = try codec.decode(codec.encode(Legacy(id: "a", title: "T", cached: ["x"])))
    #expect(decoded == Legacy(id: "a", title: "T"))
  }
}
