import Foundation
import Testing

@_spi(Backend) @testable import Coffer
@testable import CofferTools

/// The pieces of the export format and the digest that must never change between releases.
@Suite struct ExportFormatTests {
  /// The reference vectors of SipHash-2-4 (key 00…0f, message 00…n-1), 64- and 128-bit.
  @Test func sipHashMatchesTheReferenceVectors() {
    func hash(_ length: Int, wide: Bool) -> (UInt64, UInt64) {
      var hasher = SipHasher(key0: 0x0706_0504_0302_0100, key1: 0x0f0e_0d0c_0b0a_0908, wide: wide)
      let message = (0..<length).map { UInt8($0) }
      message.withUnsafeBytes { hasher.combine(bytes: $0) }
      return wide ? hasher.finalize128() : (hasher.finalize64(), 0)
    }
    #expect(hash(0, wide: false).0 == 0x726f_db47_dd0e_0e31)
    #expect(hash(15, wide: false).0 == 0xa129_ca61_49be_45e5)
    let wide = hash(0, wide: true)
    let bytes = withUnsafeBytes(of: (wide.0.littleEndian, wide.1.littleEndian)) { Array($0) }
    #expect(
      bytes == [
        0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55, 0x02, 0x93,
      ])
  }

  /// Feeding bytes one at a time, eight at a time or all at once gives the same hash.
  @Test func sipHashIsTheSameHoweverBytesArrive() {
    let message = (0..<37).map { UInt8(truncatingIfNeeded: $0 * 13) }
    var whole = SipHasher(key0: 1, key1: 2)
    message.withUnsafeBytes { whole.combine(bytes: $0) }
    var single = SipHasher(key0: 1, key1: 2)
    for byte in message { single.combine(byte) }
    var mixed = SipHasher(key0: 1, key1: 2)
    mixed.combine(message[0])
    message[1...].withUnsafeBytes { mixed.combine(bytes: $0) }
    let expected = whole.finalize128()
    #expect(single.finalize128() == expected)
    #expect(mixed.finalize128() == expected)
  }

  /// Words added after any number of single bytes hash as their eight bytes would.
  @Test(arguments: 0..<8)
  func sipHashTakesWordsAtAnyOffset(leadingBytes: Int) {
    let message = (0..<53).map { UInt8(truncatingIfNeeded: $0 * 29 + 7) }
    var single = SipHasher(key0: 3, key1: 4)
    for byte in message { single.combine(byte) }
    var words = SipHasher(key0: 3, key1: 4)
    for byte in message.prefix(leadingBytes) { words.combine(byte) }
    var index = leadingBytes
    while message.count - index >= 8 {
      let word = message[index..<index + 8].reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
      words.combine(word)
      index += 8
    }
    for byte in message[index...] { words.combine(byte) }
    var runs = SipHasher(key0: 3, key1: 4)
    for byte in message.prefix(leadingBytes) { runs.combine(byte) }
    message[leadingBytes...].withUnsafeBytes { runs.combine(bytes: $0) }
    let expected = single.finalize128()
    #expect(words.finalize128() == expected)
    #expect(runs.finalize128() == expected)
  }

  @Test(arguments: [
    (Int64(0), "1970-01-01T00:00:00.000000Z"),
    (-1, "1969-12-31T23:59:59.999999Z"),
    (1_700_000_000_123_456, "2023-11-14T22:13:20.123456Z"),
    (951_782_400_000_000, "2000-02-29T00:00:00.000000Z"),
    (-62_135_596_800_000_000, "0001-01-01T00:00:00.000000Z"),
    (253_402_300_799_999_999, "9999-12-31T23:59:59.999999Z"),
    (253_402_300_800_000_000, "+10000-01-01T00:00:00.000000Z"),
    (-62_167_219_200_000_001, "-0001-12-31T23:59:59.999999Z"),
  ])
  func datesAreWrittenAndReadToTheMicrosecond(microseconds: Int64, text: String) {
    #expect(ExportDate.text(microseconds: microseconds) == text)
    #expect(ExportDate.microseconds(text: text) == microseconds)
  }

  @Test func extremeDatesRoundTrip() {
    for microseconds in [Int64.min, .max, .min + 1, .max - 1] {
      #expect(ExportDate.microseconds(text: ExportDate.text(microseconds: microseconds)) == microseconds)
    }
  }

  @Test(arguments: [
    "2023-02-29T00:00:00.000000Z", "2023-13-01T00:00:00.000000Z", "2023-01-01T24:00:00.000000Z",
    "2023-01-01T00:00:00Z", "2023-01-01 00:00:00.000000Z", "", "+99999999999999-01-01T00:00:00.000000Z",
  ])
  func malformedDatesAreRefused(text: String) {
    #expect(ExportDate.microseconds(text: text) == nil)
  }

  @Test func rowLinesRoundTripEveryKindExactly() throws {
    let schema = try EntitySchema(
      name: "Ünïcode \"name\"",
      fields: [
        Field("id", .string), Field("d", .double), Field("i", .int), Field("b", .bytes), Field("t", .date),
        Field("u", .uuid), Field("x", .document), Field("f", .bool, isOptional: true),
      ], idField: "id")
    let doubles: [Double] = [
      -0.0, .infinity, -.infinity, .leastNonzeroMagnitude, .greatestFiniteMagnitude, 0.1, 1e300,
    ]
    for (number, double) in doubles.enumerated() {
      let row = Row([
        .string("\u{0}\"\\\n\t\u{1F}é e\u{301} 🙂 \(number)"), .double(double),
        .int(number.isMultiple(of: 2) ? .min : .max),
        .bytes(Data([0, 255, UInt8(number)])), .date(Value.date(microsecondsSince1970: -1_234_567)),
        .uuid(UUID()), .document(Data("{}".utf8)), number == 3 ? .null : .bool(true),
      ])
      var text = ""
      JSONLines.appendRow(row, of: schema, to: &text)
      #expect(text.hasSuffix("\n") && text.filter { $0 == "\n" }.count == 1)
      var parser = JSONLineParser(text.dropLast())
      #expect(try parser.lineKind() == "row")
      let read = try parser.row(of: schema)
      #expect(read == row)
      guard case .double(let back) = read[1] else { Issue.record("not a double"); continue }
      #expect(back.bitPattern == double.bitPattern)
      guard case .string(let string) = read[0], case .string(let original) = row[0] else { continue }
      #expect(Array(string.utf8) == Array(original.utf8))
    }
  }

  @Test(arguments: [
    #"{"row":{"id":"a","n":1.5}}"#, #"{"row":{"id":"a","n":"1"}}"#, #"{"row":{"id":"a","n":01}}"#,
    #"{"row":{"id":"a","n":9223372036854775808}}"#, #"{"row":{"id":"a"}}"#,
    #"{"row":{"id":"a","n":1,"n":2}}"#,
    #"{"row":{"id":"a","n":1,"m":2}}"#, #"{"row":{"id":"\ud800","n":1}}"#, #"{"row":{"id":"a","n":1}} x"#,
    #"{"row":{"id":"a","n":1}"#, "{\"row\":{\"id\":\"a\u{09}b\",\"n\":1}}",
  ])
  func malformedRowLinesAreRefused(line: String) throws {
    let schema = try EntitySchema(name: "E", fields: [Field("id", .string), Field("n", .int)], idField: "id")
    var parser = JSONLineParser(line)
    #expect(throws: CofferError.self) {
      _ = try parser.lineKind()
      _ = try parser.row(of: schema)
    }
  }
}

extension ExportFormatTests {
  /// A digest written by one release must compare equal in every later one: the hash of
  /// these rows is fixed here, so a change to the row encoding or the hasher shows.
  @Test func rowDigestsNeverChange() throws {
    let schema = try EntitySchema(
      name: "Digested",
      fields: [
        Field("id", .string), Field("note", .string, isOptional: true), Field("count", .int),
        Field("ratio", .double), Field("flag", .bool), Field("blob", .bytes), Field("when", .date),
        Field("uuid", .uuid), Field("doc", .document),
      ], idField: "id")
    var digester = RowDigester(schema: schema)
    for number in 0..<5 {
      digester.add(
        Row([
          .string("row \(number) ü"),
          number == 2 ? .null : .string(String(repeating: "x", count: number * 5)),
          .int(number == 4 ? .min : Int64(number) * 1_000_003),
          .double(number == 3 ? -0.0 : Double(number) / 7),
          .bool(number.isMultiple(of: 2)), .bytes(Data((0..<UInt8(number * 3)).map { $0 &* 17 })),
          .date(Value.date(microsecondsSince1970: Int64(number) * 86_400_000_001)),
          .uuid(UUID(uuid: (UInt8(number), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15))),
          .document(Data("{\"n\":\(number)}".utf8)),
        ]))
    }
    #expect(digester.digest.count == 5)
    #expect(digester.digest.rowsHash == "404dde742c778289533982ff25ed64c2")
  }
}
