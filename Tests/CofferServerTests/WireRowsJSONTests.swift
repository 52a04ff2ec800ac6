@_spi(Backend) import Coffer
import CofferTestSupport
import CofferWire
import Foundation
import Testing

/// The hand-written rows JSON is `Codable`'s form exactly: what one side writes the other reads,
/// for every kind of value and its edges, and the hand reader refuses (for `JSONDecoder` to
/// explain) what is not of that form.
@Suite struct WireRowsJSONTests {
  static let edges: [Value] = [
    .null, .bool(true), .bool(false), .int(0), .int(-1), .int(.max), .int(.min), .double(0), .double(-0.0),
    .double(.infinity), .double(-.infinity), .double(.pi), .double(1e300), .double(.leastNonzeroMagnitude),
    .double(-1e-7),
    .double(Double(Int64.max)), .string(""), .string("plain"), .string("quote \" back \\ slash / tab \t"),
    .string("nul \u{0} bell \u{7} unit \u{1F} del \u{7F}"), .string("é ü 日本語 🙂 👩‍👩‍👧 \u{200F}שלום"),
    .string("line\nbreak\r\n"), .bytes(Data()), .bytes(Data([0, 1, 2, 254, 255])),
    .document(Data(#"{"a":[1,2,{"b":null}]}"#.utf8)),
    .date(Value.date(microsecondsSince1970: 1_700_000_000_123_456)),
    .date(Value.date(microsecondsSince1970: -86_400_000_001)),
    .uuid(UUID(uuidString: "E621E1F8-C36C-495A-93FC-0C247A3E6E5F") ?? UUID()),
  ]

  static func random(_ random: inout SeededGenerator) -> Value {
    switch random.below(9) {
    case 0: return .null
    case 1: return .bool(random.below(2) == 0)
    case 2: return .int(Int64(bitPattern: random.next()))
    case 3:
      let number = Double(bitPattern: random.next())
      return .double(number.isNaN ? 0 : number)
    case 4:
      let scalars = (0..<random.below(12)).compactMap { _ in
        Unicode.Scalar(UInt32(random.below(2) == 0 ? random.below(0x80) : random.below(0x11_0000)))
      }
      return .string(String(String.UnicodeScalarView(scalars)))
    case 5: return .bytes(Data((0..<random.below(20)).map { _ in UInt8(random.below(256)) }))
    case 6: return .date(Value.date(microsecondsSince1970: Int64(random.below(4_000_000_000_000_000)) - 10))
    case 7: return .uuid(UUID())
    default: return .document(Data(#"{"k":\#(random.below(1000))}"#.utf8))
    }
  }

  private func read(_ bytes: [UInt8]) -> WireRows? { bytes.withUnsafeBytes { WireRowsJSON.read($0) } }

  private func same(_ left: WireRows, _ right: WireRows) -> Bool {
    // Doubles by their bits, so -0.0 and 0.0 differ.
    func bits(_ rows: WireRows) -> [[String]] {
      (rows.rows + [rows.next?.values ?? []]).map { row in
        row.map { value in
          if case .double(let number) = value { return "double \(number.bitPattern)" }
          return "\(value)"
        }
      }
    }
    return bits(left) == bits(right) && (left.next == nil) == (right.next == nil)
  }

  @Test func everyEdgeGoesBothWaysWithCodable() throws {
    for next in [nil, WireCursor(values: [.string("b\u{1}"), .int(.min)])] {
      let rows = WireRows(rows: [Self.edges, [], Self.edges.reversed()], next: next)
      let hand = try WireRowsJSON.write(rows)
      let decoded = try JSONDecoder().decode(WireRows.self, from: Data(hand))
      #expect(same(decoded, rows), "Codable reads the hand-written rows differently")
      let codable = try #require(read(Array(try JSONEncoder().encode(rows))))
      #expect(same(codable, rows), "the hand reader reads Codable's rows differently")
      let back = try #require(read(hand))
      #expect(same(back, rows))
    }
  }

  @Test func randomRowsGoBothWays() throws {
    var random = SeededGenerator(seed: 4_401)
    for _ in 0..<300 {
      let width = random.below(6)
      let rows = WireRows(
        rows: (0..<random.below(5)).map { _ in (0..<width).map { _ in Self.random(&random) } },
        next: random.below(2) == 0 ? nil : WireCursor(values: [Self.random(&random)]))
      let hand = try WireRowsJSON.write(rows)
      #expect(same(try JSONDecoder().decode(WireRows.self, from: Data(hand)), rows))
      let formatter = JSONEncoder()
      formatter.outputFormatting = random.below(2) == 0 ? [.prettyPrinted, .sortedKeys] : []
      let codable = try #require(read(Array(try formatter.encode(rows))))
      #expect(same(codable, rows))
    }
  }

  @Test func refusesWhatIsNotTheRowsForm() throws {
    for text in [
      "", "{}", #"{"rows":[[{"int":1}]]"#, #"{"rows":[[{"int":1.5}]]}"#,
      #"{"rows":[[{"int":9223372036854775808}]]}"#,
      #"{"rows":[[{"int":01}]]}"#, #"{"rows":[[{"double":NaN}]]}"#, #"{"rows":[[{"double":"nan"}]]}"#,
      #"{"rows":[[{"kind":1}]]}"#, #"{"rows":[[{"int":1,"bool":true}]]}"#, #"{"rows":[[{"string":"\x"}]]}"#,
      #"{"rows":[[{"string":"\uD800"}]]}"#, #"{"rows":[[{"uuid":"not"}]]}"#, #"{"rows":[],"other":1}"#,
      #"{"rows":[]} trailing"#, "{\"rows\":[[{\"string\":\"raw\u{1}control\"}]]}",
    ] {
      #expect(read(Array(text.utf8)) == nil, "the hand reader took \(text)")
    }
    #expect(throws: EncodingError.self) { try WireRowsJSON.write(WireRows(rows: [[.double(.nan)]])) }
    let spaced =
      " { \"next\" : null , \"rows\" : [ [ { \"int\" : -7 } , { \"string\" : \"\\u00e9\\ud83d\\ude42\" } ] ] } "
    let rows = try #require(read(Array(spaced.utf8)))
    #expect(rows.rows == [[.int(-7), .string("é🙂")]] && rows.next == nil)
  }
}
