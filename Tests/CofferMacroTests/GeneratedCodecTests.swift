@_spi(Backend) import Coffer
import CofferMacros
import CofferMemory
import Foundation
import Testing

@Suite struct GeneratedCodec {
  @Test func aMacroTypeUsesItsGeneratedCodeUnlessToldToUseCodable() throws {
    #expect(try EntityCodec<Note>().usesGeneratedCode)
    #expect(try EntityCodec<Note>(using: .codable).usesGeneratedCode == false)
    let underCodable = try RowCodecChoice.$current.withValue(.codable) { try EntityCodec<Note>() }
    #expect(underCodable.usesGeneratedCode == false)
  }

  @Test func encodesTheRowsTheCodableCodecEncodes() throws {
    let generated = try EntityCodec<Note>(using: .generated)
    let codable = try EntityCodec<Note>(using: .codable)
    for note in Note.variety { #expect(try generated.encode(note) == codable.encode(note)) }
  }

  @Test func decodesWhatEitherCodecEncodes() throws {
    let generated = try EntityCodec<Note>(using: .generated)
    let codable = try EntityCodec<Note>(using: .codable)
    for note in Note.variety {
      var expected = note
      expected.isSelected = false
      #expect(try generated.decode(codable.encode(note)) == expected)
      #expect(try codable.decode(generated.encode(note)) == expected)
    }
  }

  /// Both codecs put a date in a row already rounded to the microsecond, the form every store
  /// keeps, so that checking the row before it is stored finds nothing to change.
  @Test func bothCodecsRoundDatesToTheMicrosecond() throws {
    var note = Note.variety[0]
    note.date = Date(timeIntervalSince1970: 1_700_000_000.123_456_789)
    note.readAt = Date(timeIntervalSince1970: -12.000_000_7)
    for choice in [RowCodecChoice.generated, .codable] {
      let codec = try EntityCodec<Note>(using: choice)
      let row = try codec.encode(note)
      for (field, date) in [("date", note.date), ("readAt", note.readAt)] {
        let position = try #require(codec.schema.position(of: field))
        guard case .date(let stored) = row[position], let date else {
          Issue.record("\(field) is not stored as a date by the \(choice) codec")
          continue
        }
        // Exact equality of the two `Date`s, not `Value`'s microsecond equality.
        #expect(
          stored.timeIntervalSinceReferenceDate == Value.normalized(date).timeIntervalSinceReferenceDate)
        #expect(stored != date)
      }
    }
  }

  @Test func transientPropertiesAreNotStoredAndReadBackAsTheirInitialValue() throws {
    let schema = try EntitySchema(for: Note.self)
    #expect(schema.field(named: "isSelected") == nil)
    #expect(schema.field(named: "preview") == nil)
    let decoded = try EntityCodec<Note>().decode(EntityCodec<Note>().encode(Note.variety[0]))
    #expect(decoded.isSelected == false)
  }

  @Test func schemaFollowsDeclarationOrderMarkersAndInitialValues() throws {
    let schema = try EntitySchema(for: Note.self)
    #expect(
      schema.fields.map(\.name) == [
        "id", "threadID", "body", "date", "readAt", "slug", "mood", "score", "flag", "count", "attachment",
        "tags", "data", "link",
      ])
    #expect(schema.field(named: "readAt") == Field("readAt", .date, isOptional: true))
    #expect(schema.field(named: "mood") == Field("mood", .string, default: "calm"))
    #expect(schema.field(named: "count") == Field("count", .int, default: 7))
    #expect(schema.field(named: "attachment")?.kind == .document)
    #expect(schema.field(named: "tags")?.defaultValue == .document(Data("[]".utf8)))
    #expect(schema.indexes == [.on("threadID"), .unique("slug")])
  }

  @Test func anotherPropertyCanBeTheIDUnderAnEntityNameOfItsOwn() throws {
    let person = Person(personID: UUID(), name: "Ada")
    #expect(person.id == person.personID)
    #expect(Person.entityName == "Person")
    #expect(Person.idField == "personID")
    #expect(try EntitySchema(for: Person.self).idField == Field("personID", .uuid))
  }

  @Test func anUnsignedValueAboveInt64MaxIsRejectedNamingTheField() throws {
    let error = #expect(throws: CofferError.self) {
      try StoredField.value(UInt64.max, "big", in: "Counter")
    }
    #expect(error?.code == .valueOutOfRange)
    #expect(error?.field == "big")
  }

  @Test func aRowOfTheWrongKindFailsToDecodeNamingEntityIDAndField() throws {
    var row = try EntityCodec<Note>().encode(Note.variety[1])
    row[3] = "not a date"
    let error = #expect(throws: CofferError.self) { try EntityCodec<Note>().decode(row) }
    #expect(error?.code == .decodingFailed)
    #expect(error?.entity == "Note")
    #expect(error?.id == "2")
    #expect(error?.field == "date")
  }

  @Test func updatingReturnsAChangedCopy() {
    let note = Note.sample(1)
    let edited = note.updating(\.text, to: "changed").updating(\.readAt, to: note.date)
    #expect(edited.text == "changed")
    #expect(edited.readAt == note.date)
    #expect(note.text == "hello")
    #expect(note.readAt == nil)
  }
}

@Suite struct GeneratedCodecShapes {
  @Test func privatePropertiesAreStoredAndReadBack() throws {
    let codec = try EntityCodec<Secretive>()
    let value = Secretive(id: 1, secret: "psst")
    #expect(try codec.decode(codec.encode(value)).revealed == "psst")
    #expect(try EntitySchema(for: Secretive.self) == EntitySchema(probing: Secretive.self))
  }

  @Test func aGenericModelGetsTheSchemaOfItsSpecialization() throws {
    #expect(try EntitySchema(for: Box<Int>.self) == EntitySchema(probing: Box<Int>.self))
    #expect(try EntitySchema(for: Box<[String]>.self).field(named: "content")?.kind == .document)
    let codec = try EntityCodec<Box<Double>>()
    #expect(try codec.decode(codec.encode(Box(id: "a", content: 2.5))) == Box(id: "a", content: 2.5))
  }
}
