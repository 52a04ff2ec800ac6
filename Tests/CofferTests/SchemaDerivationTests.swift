@_spi(Backend) import Coffer
import Foundation
import Testing

enum Mood: String, Codable, CaseIterable { case happy, sad }
enum Priority: Int, Codable, CaseIterable { case low = 1, high = 2 }
struct Address: Codable, Hashable { var street: String; var zip: Int }

struct Everything: Storable, Equatable {
  var id: Int64
  var flag: Bool
  var small: Int8
  var count: Int
  var big: UInt64
  var ratio: Double
  var single: Float
  var name: String
  var blob: Data
  var when: Date
  var token: UUID
  var link: URL
  var mood: Mood
  var priority: Priority?
  var tags: [String]
  var address: Address?
  var note: String?
}

struct Renamed: Storable {
  var code: String
  var title: String
  var id: String { code }
  static var entityName: String { "Ünïcode Entity" }
  static var idField: String { "code" }
  static var indexes: [Index] { [.unique("title")] }
}

@Suite struct SchemaDerivationTests {
  @Test func fieldsFollowDeclarationOrderWithKindsAndOptionality() throws {
    let schema = try EntitySchema(for: Everything.self)
    #expect(schema.name == "Everything")
    #expect(
      schema.fields.map(\.name) == [
        "id", "flag", "small", "count", "big", "ratio", "single", "name", "blob", "when", "token", "link",
        "mood",
        "priority", "tags", "address", "note",
      ])
    #expect(
      schema.fields.map(\.kind) == [
        .int, .bool, .int, .int, .int, .double, .double, .string, .bytes, .date, .uuid, .string, .string,
        .int,
        .document, .document, .string,
      ])
    #expect(schema.fields.filter(\.isOptional).map(\.name) == ["priority", "address", "note"])
    #expect(schema.idField.name == "id")
  }

  @Test func entityNameIdFieldAndIndexesCanBeCustomized() throws {
    let schema = try EntitySchema(for: Renamed.self)
    #expect(schema.name == "Ünïcode Entity")
    #expect(schema.idField.name == "code")
    #expect(schema.uniqueIndexes == [Index(["title"], isUnique: true)])
  }

  @Test func rowCodecRoundTripsEveryKind() throws {
    let codec = try EntityCodec<Everything>()
    let value = Everything(
      id: 7, flag: true, small: -5, count: Int.max, big: UInt64(Int64.max), ratio: -.infinity, single: 1.5,
      name: "e\u{301}", blob: Data([0, 255, 1]), when: Date(timeIntervalSince1970: 1_700_000_000.123456),
      token: UUID(), link: URL(string: "https://example.com/a?b=c")!, mood: .sad, priority: .high,
      tags: ["a", "b"], address: Address(street: "Main", zip: 12345), note: nil)
    let row = try codec.encode(value)
    #expect(row[12] == .string("sad"))
    #expect(row[13] == .int(2))
    #expect(row[16] == .null)
    let back = try codec.decode(row)
    #expect(back == value)
  }

  @Test func unsignedAboveInt64MaxIsRejectedWithFieldNamed() throws {
    let codec = try EntityCodec<Everything>()
    var value = Everything(
      id: 1, flag: false, small: 0, count: 0, big: UInt64(Int64.max) + 1, ratio: 0, single: 0, name: "",
      blob: Data(), when: Date(), token: UUID(), link: URL(string: "a:b")!, mood: .happy, priority: nil,
      tags: [],
      address: nil, note: nil)
    #expect {
      _ = try codec.encode(value)
    } throws: { error in
      (error as? CofferError)?.code == .valueOutOfRange && (error as? CofferError)?.field == "big"
    }
    value.big = 3
    #expect(try codec.encode(value)[4] == .int(3))
  }
}

enum Opaque: String, Codable { case on, off }
struct HasOpaque: Storable {
  var id: Int64
  var state: Opaque
}

struct Wrapper: Codable, Hashable { var inner: Mood; var list: [Priority] }
struct Nested: Storable, Equatable {
  var id: UUID
  var wrapper: Wrapper
  var table: [String: Int]
}

struct CustomDecoding: Storable, Equatable {
  var id: String
  var label: String?
  init(id: String, label: String?) {
    self.id = id
    self.label = label
  }
  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    id = try container.decode(String.self, forKey: .id)
    label = try container.decodeNil(forKey: .label) ? nil : try container.decode(String.self, forKey: .label)
  }
}

extension SchemaDerivationTests {
  @Test func enumWhosePlaceholderFailsAndIsNotCaseIterableNamesTheFieldAndTheFix() {
    #expect {
      _ = try EntitySchema(for: HasOpaque.self)
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidSchema && error?.field == "state"
        && error?.message.contains("CaseIterable") == true
    }
  }

  @Test func nestedCodableValuesAreDocumentsAndRoundTrip() throws {
    let codec = try EntityCodec<Nested>()
    #expect(codec.schema.fields.map(\.kind) == [.uuid, .document, .document])
    let value = Nested(
      id: UUID(), wrapper: Wrapper(inner: .sad, list: [.low, .high]), table: ["a": 1, "b": -2])
    #expect(try codec.decode(codec.encode(value)) == value)
  }

  @Test func customDecoderCheckingNilFirstDeclaresAnOptionalField() throws {
    let schema = try EntitySchema(for: CustomDecoding.self)
    #expect(schema.fields == [Field("id", .string), Field("label", .string, isOptional: true)])
    let codec = try EntityCodec<CustomDecoding>()
    let value = CustomDecoding(id: "x y", label: nil)
    #expect(try codec.decode(codec.encode(value)) == value)
  }
}

@Suite struct NaNDefaultTests {
  @Test(arguments: [Value.double(.nan), .double(-.nan), .date(Date(timeIntervalSince1970: .nan))])
  func aNaNDefaultIsRefused(_ value: Value) {
    let kind: FieldKind = if case .date = value { .date } else { .double }
    #expect {
      _ = try EntitySchema(
        name: "Reading", fields: [Field("id", .int), Field("level", kind, default: value)], idField: "id")
    } throws: { error in
      let error = error as? CofferError
      return error?.code == .invalidSchema && error?.field == "level"
        && error?.message.contains("NaN") == true
    }
  }

  @Test func infiniteDefaultsRoundTripThroughJSON() throws {
    for value in [Value.double(.infinity), .double(-.infinity), .double(-0.0)] {
      let schema = try EntitySchema(
        name: "Reading", fields: [Field("id", .int), Field("level", .double, default: value)], idField: "id")
      let decoded = try JSONDecoder().decode(EntitySchema.self, from: JSONEncoder().encode(schema))
      #expect(decoded == schema)
    }
  }

  @Test func aNaNValueDoesNotEncode() {
    #expect(throws: EncodingError.self) { try JSONEncoder().encode(Value.double(.nan)) }
  }
}
