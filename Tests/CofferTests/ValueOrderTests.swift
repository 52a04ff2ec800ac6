@_spi(Backend) import Coffer
import Foundation
import Testing

@Suite struct ValueOrderTests {
  @Test func stringsCompareByCodePointNotByLocaleOrCanonicalEquivalence() {
    #expect(ValueOrder.compare("Z", "a") < 0)
    #expect(ValueOrder.compare("a", "é") < 0)
    #expect(ValueOrder.compare("\u{FFFF}", "😀") < 0)
    let precomposed = Value.string("\u{E9}")
    let decomposed = Value.string("e\u{301}")
    #expect(precomposed != decomposed)
    #expect(ValueOrder.compare(decomposed, precomposed) < 0)
    #expect(Set([precomposed, decomposed]).count == 2)
  }

  @Test func nullSortsFirstAndNumbersCompareNumerically() {
    #expect(ValueOrder.compare(.null, .int(Int64.min)) < 0)
    #expect(ValueOrder.compare(.double(-.infinity), .double(-1e308)) < 0)
    #expect(Value.double(-0.0) == Value.double(0.0))
    #expect(ValueOrder.compare(.int(2), .double(2.5)) < 0)
  }

  @Test func bytesAndUUIDsCompareAsUnsignedBytes() {
    #expect(ValueOrder.compare(.bytes(Data([0x7F])), .bytes(Data([0x80]))) < 0)
    #expect(ValueOrder.compare(.bytes(Data([1])), .bytes(Data([1, 0]))) < 0)
    let low = UUID(uuidString: "00000000-0000-0000-0000-0000000000FF")!
    let high = UUID(uuidString: "01000000-0000-0000-0000-000000000000")!
    #expect(ValueOrder.compare(.uuid(low), .uuid(high)) < 0)
  }

  @Test func uuidsCompareAsTheirSixteenBytes() {
    // UUIDs that share leading bytes, so that every byte position decides some pairs.
    var generator = SystemRandomNumberGenerator()
    let uuids = (0..<400).map { _ in
      var bytes = (0..<16).map { _ in UInt8.random(in: 0...3, using: &generator) }
      bytes[Int.random(in: 0..<16, using: &generator)] = .random(in: 0...255, using: &generator)
      return UUID(
        uuid: (
          bytes[0], bytes[1], bytes[2], bytes[3], bytes[4], bytes[5], bytes[6], bytes[7], bytes[8], bytes[9],
          bytes[10], bytes[11], bytes[12], bytes[13], bytes[14], bytes[15]
        ))
    }
    func bytes(_ uuid: UUID) -> [UInt8] { withUnsafeBytes(of: uuid.uuid) { Array($0) } }
    for (lhs, rhs) in zip(uuids, uuids.shuffled()) {
      let expected = bytes(lhs).lexicographicallyPrecedes(bytes(rhs)) ? -1 : (lhs == rhs ? 0 : 1)
      #expect(ValueOrder.compare(.uuid(lhs), .uuid(rhs)) == expected)
    }
  }

  @Test func datesCompareToTheMicrosecond() {
    let base = Date(timeIntervalSince1970: 1_000)
    #expect(Value.date(base) == Value.date(base.addingTimeInterval(0.000_000_4)))
    #expect(Value.date(base) != Value.date(base.addingTimeInterval(0.000_001)))
    #expect(ValueOrder.compare(.date(base), .date(base.addingTimeInterval(0.000_001))) < 0)
    let before1970 = Date(timeIntervalSince1970: -12_345.678_901)
    #expect(Value.microseconds(since1970: before1970) == -12_345_678_901)
    #expect(Value.date(microsecondsSince1970: -12_345_678_901) == Value.normalized(before1970))
  }

  @Test(arguments: [
    Value.null, .bool(true), .int(Int64.min), .double(.infinity), .double(-.infinity), .string("e\u{301} \0"),
    .bytes(Data([0, 1, 255])), .date(Date(timeIntervalSince1970: 1.000_001)), .uuid(UUID()),
    .document(Data("{\"a\":1}".utf8)),
  ])
  func valuesRoundTripThroughTheirCodableForm(value: Value) throws {
    let data = try JSONEncoder().encode(value)
    #expect(try JSONDecoder().decode(Value.self, from: data) == value)
  }
}

@Suite struct StringMatchingTests {
  let schema = try! EntitySchema(
    name: "T", fields: [Field("id", .int), Field("s", .string, isOptional: true)], idField: "id")

  func matches(_ text: String?, _ filter: Filter) throws -> Bool {
    try CompiledFilter(filter, schema: schema).matches(Row([.int(1), text.map(Value.string) ?? .null]))
  }

  @Test func matchingIsCaseSensitiveAndWildcardsAreLiteral() throws {
    #expect(try matches("Hello", FieldRef("s").contains("ell")))
    #expect(try !matches("Hello", FieldRef("s").contains("ELL")))
    #expect(try !matches("abc", FieldRef("s").contains("a%")))
    #expect(try matches("50% off", FieldRef("s").contains("0%")))
    #expect(try !matches("abc", FieldRef("s").hasPrefix("_")))
    #expect(try matches("a_b", FieldRef("s").hasSuffix("_b")))
    #expect(try !matches("abc", FieldRef("s").contains("*")))
  }

  @Test func emptyPatternMatchesEveryStringButNotNull() throws {
    #expect(try matches("", FieldRef("s").contains("")))
    #expect(try !matches(nil, FieldRef("s").contains("")))
  }

  @Test func decomposedAndPrecomposedDoNotMatchEachOther() throws {
    #expect(try !matches("caf\u{E9}", FieldRef("s").hasSuffix("e\u{301}")))
    #expect(try matches("cafe\u{301}", FieldRef("s").hasSuffix("e\u{301}")))
  }

  @Test func notMatchesExactlyWhatItsOperandDoesNotIncludingNulls() throws {
    let filter = FieldRef("s") == "x"
    #expect(try !matches(nil, filter))
    #expect(try matches(nil, !filter))
    #expect(try !matches(nil, FieldRef("s") != "x"))
  }
}
