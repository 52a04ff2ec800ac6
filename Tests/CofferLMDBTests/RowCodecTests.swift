@_spi(Backend) import Coffer
import Foundation
import Testing

@testable import CofferLMDB

@Suite struct RowCodecTests {
  let schema = try! EntitySchema(
    name: "Every",
    fields: [
      Field("id", .int), Field("b", .bool), Field("i", .int), Field("d", .double), Field("s", .string),
      Field("x", .bytes), Field("t", .date), Field("u", .uuid), Field("j", .document),
      Field("n", .string, isOptional: true),
    ],
    idField: "id")

  let values: [Value] = [
    .int(.min), true, .int(.max), .double(-.infinity), "a\u{0}é😀", .bytes(Data([0, 1, 255])),
    .date(Value.date(microsecondsSince1970: -1_234_567)), .uuid(UUID()), .document(Data("{\"a\":[1]}".utf8)),
    .null,
  ]

  func encoded(_ values: [Value], layout: Int = 3) -> [UInt8] {
    var bytes: [UInt8] = []
    RowCodec.encode(values, layout: layout, into: &bytes)
    return bytes
  }

  @Test func everyKindRoundTripsExactly() throws {
    let bytes = encoded(values)
    let decoded = try bytes.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 3) }
    #expect(decoded == values)
    #expect(bytes.withUnsafeBytes { try? RowCodec.layout(of: $0) } == 3)
  }

  @Test func everyTruncationIsAnErrorNotACrash() {
    let bytes = encoded(values)
    for length in 0..<bytes.count {
      let cut = Array(bytes[..<length])
      #expect(throws: RowDamage.self) {
        try cut.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 3) }
      }
    }
  }

  @Test func flippedBytesNeverCrash() {
    let bytes = encoded(values)
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      var damaged = bytes
      for _ in 0..<3 {
        damaged[Int.random(in: 0..<damaged.count, using: &generator)] = UInt8.random(
          in: 0...255, using: &generator)
      }
      _ = try? damaged.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 3) }
    }
  }

  @Test func hugeLengthsAreRefused() {
    var bytes: [UInt8] = [RowCodec.version, 0, 2, 3, 2, 5]
    RowCodec.appendVarint(UInt64.max >> 1, to: &bytes)
    let schema = try! EntitySchema(
      name: "S", fields: [Field("id", .int), Field("s", .string)], idField: "id")
    #expect(throws: RowDamage.self) {
      try bytes.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 0) }
    }
  }

  @Test func aNewerRowFormatIsNamed() {
    var bytes = encoded(values)
    bytes[0] = RowCodec.version + 1
    #expect {
      try bytes.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 3) }
    } throws: { error in
      if case .newerFormat(RowCodec.version + 1) = error as? RowDamage { return true }
      return false
    }
  }

  /// The reason a damaged row gives, or `nil` when it decodes.
  func reason(_ bytes: [UInt8]) -> String? {
    do {
      _ = try bytes.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 3) }
      return nil
    } catch {
      guard case .malformed(let reason) = error as? RowDamage else { return "\(error)" }
      return reason
    }
  }

  @Test func aValueOfAnotherKindNamesTheFieldAndBothKinds() {
    var changed = values
    changed[2] = "text"
    #expect(reason(encoded(changed)) == "field 'i' holds a value of kind string but is declared int")
    changed = values
    changed[4] = .int(1)
    #expect(reason(encoded(changed)) == "field 's' holds a value of kind int but is declared string")
  }

  @Test func anUnknownTagNamesTheField() {
    var bytes = encoded(values)
    // The header is three bytes (version, layout 3, count 10); the id's tag follows.
    bytes[3] = 12
    #expect(reason(bytes) == "field 'id' has unknown value tag 12")
    bytes[3] = 200
    #expect(reason(bytes) == "field 'id' has unknown value tag 200")
  }

  @Test func nullIsAcceptedForEveryKind() throws {
    for position in values.indices {
      var changed = values
      changed[position] = .null
      #expect(reason(encoded(changed)) == nil, "field \(position)")
    }
  }

  @Test func aNumberOfMoreThanSixtyFourBitsIsRefused() {
    var bytes: [UInt8] = [RowCodec.version, 0, 2, 3, 2, 3]
    bytes += Array(repeating: 0xFF, count: 9) + [0x02]
    let schema = try! EntitySchema(name: "S", fields: [Field("id", .int), Field("n", .int)], idField: "id")
    #expect {
      try bytes.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 0) }
    } throws: { error in
      if case .malformed("a number is too long") = error as? RowDamage { return true }
      return false
    }
    bytes[bytes.count - 1] = 0x01
    #expect(
      (try? bytes.withUnsafeBytes { try RowCodec.decode($0, schema: schema, layout: 0) }) == [
        .int(1), .int(Int64.min),
      ])
  }
}
