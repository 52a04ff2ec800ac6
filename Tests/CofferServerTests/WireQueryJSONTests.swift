@_spi(Backend) import Coffer
import CofferTestSupport
import CofferWire
import Foundation
import Testing

/// The hand-written query JSON is `Codable`'s form exactly: random queries with every kind of
/// filter go both ways, and the hand reader refuses (for `JSONDecoder` to explain) what is not of
/// that form or carries a whole layout.
@Suite struct WireQueryJSONTests {
  static func randomFilter(_ random: inout SeededGenerator, depth: Int = 0) -> Filter {
    let field = ["id", "body", "naïve 🙂", "a\"b", ""][random.below(5)]
    func value() -> Value { WireRowsJSONTests.random(&random) }
    switch random.below(depth > 3 ? 6 : 9) {
    case 0: return .all
    case 1:
      return .compare(field: field, op: ComparisonOperator.allCases[random.below(6)], value: value())
    case 2: return .isIn(field, (0..<random.below(4)).map { _ in value() })
    case 3:
      return .string(
        field: field, match: StringMatch.allCases[random.below(StringMatch.allCases.count)],
        pattern: ["", "M", "\u{1}\n\\", "日本"][random.below(4)])
    case 4:
      return .compareFields(field: field, op: ComparisonOperator.allCases[random.below(6)], other: "other")
    case 5: return .matches(field: field, query: #""exact words" swif* -not"#)
    case 6: return .and((0..<random.below(4)).map { _ in randomFilter(&random, depth: depth + 1) })
    case 7: return .or((0..<random.below(4)).map { _ in randomFilter(&random, depth: depth + 1) })
    default: return .not(randomFilter(&random, depth: depth + 1))
    }
  }

  static func randomQuery(_ random: inout SeededGenerator) -> WireQuery {
    var query = WireQuery(Query(entity: ["Message", "ünïcode \"entity\""][random.below(2)]))
    if random.below(4) > 0 { query.filter = WireFilter(randomFilter(&random)) }
    if random.below(2) == 0 {
      query.sort = (0..<random.below(3)).map { _ in
        WireSort(Sort("f\(random.below(3))", ascending: random.below(2) == 0))
      }
    }
    if random.below(2) == 0 { query.limit = random.below(2) == 0 ? 0 : Int(Int32.max) + random.below(9) }
    if random.below(3) == 0 { query.offset = random.below(1000) }
    if random.below(3) == 0 { query.layoutDigest = WireLayoutDigest.of(Fixtures.notes) }
    if random.below(4) == 0 {
      query.after = WireCursor(values: [WireRowsJSONTests.random(&random), .int(7)])
    }
    if random.below(4) == 0 { query.select = ["id", "naïve"] }
    return query
  }

  private func read(_ bytes: [UInt8]) -> WireQuery? { bytes.withUnsafeBytes { WireQueryJSON.read($0) } }

  /// Two queries by their JSON with sorted keys: doubles by their digits, so -0.0 and 0.0 differ.
  private func same(_ left: WireQuery, _ right: WireQuery) throws -> Bool {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try encoder.encode(left) == encoder.encode(right)
  }

  @Test func randomQueriesGoBothWaysWithCodable() throws {
    var random = SeededGenerator(seed: 4_402)
    for _ in 0..<400 {
      let query = Self.randomQuery(&random)
      let hand = try WireQueryJSON.write(query)
      #expect(try same(try JSONDecoder().decode(WireQuery.self, from: Data(hand)), query))
      let formatter = JSONEncoder()
      formatter.outputFormatting = random.below(2) == 0 ? [.prettyPrinted, .sortedKeys] : []
      let codable = try #require(read(Array(try formatter.encode(query))))
      #expect(try same(codable, query), "the hand reader reads Codable's query differently")
      #expect(try same(try #require(read(hand)), query))
    }
  }

  @Test func aWholeLayoutIsWrittenAndLeftToJSONDecoder() throws {
    var query = WireQuery(Query(entity: "Message", filter: .compare(field: "id", op: .equal, value: .int(1))))
    query.layout = Fixtures.notes
    let hand = try WireQueryJSON.write(query)
    #expect(try same(try JSONDecoder().decode(WireQuery.self, from: Data(hand)), query))
    #expect(read(hand) == nil)
  }

  @Test func refusesWhatIsNotTheQueryForm() throws {
    let deep =
      String(repeating: #"{"not":"#, count: WireFilter.hardDepthLimit) + #"{"all":true}"#
      + String(repeating: "}", count: WireFilter.hardDepthLimit)
    for text in [
      "", "{}", #"{"filter":{"all":true}}"#, #"{"entity":"E","entity":"E"}"#, #"{"entity":"E","other":1}"#,
      #"{"entity":"E","filter":{"all":false}}"#, #"{"entity":"E","filter":{"all":true,"or":[]}}"#,
      #"{"entity":"E","filter":{"compare":{"field":"a","op":"=","value":{"int":1}}}}"#,
      #"{"entity":"E","filter":{"compare":{"field":"a","op":"==","value":{"int":1},"extra":"x"}}}"#,
      #"{"entity":"E","filter":{"compare":{"field":"a","op":"=="}}}"#,
      #"{"entity":"E","filter":{"in":{"field":"a","values":[{"int":1}],"value":{"int":1}}}}"#,
      #"{"entity":"E","limit":1.5}"#, #"{"entity":"E","limit":-1e2}"#,
      #"{"entity":"E","sort":[{"ascending":true}]}"#,
      #"{"entity":"E","after":{"values":[],"more":[]}}"#, #"{"entity":"E"} trailing"#,
      #"{"entity":"E","filter":"# + deep + "}",
    ] {
      #expect(read(Array(text.utf8)) == nil, "the hand reader took \(text.prefix(120))")
    }
    #expect(throws: EncodingError.self) {
      try WireQueryJSON.write(
        WireQuery(Query(entity: "E", filter: .compare(field: "a", op: .equal, value: .double(.nan)))))
    }
    let spaced = #" { "limit" : null , "sort" : [ { "field" : "date" } ] , "entity" : "E\u00e9" } "#
    let query = try #require(read(Array(spaced.utf8)))
    #expect(query.entity == "Eé" && query.limit == nil && query.sort == [WireSort(Sort("date"))])
  }

  @Test func theDigestIsStableAndSeesEveryChange() throws {
    let schema = Fixtures.notes
    #expect(WireLayoutDigest.of(schema) == WireLayoutDigest.of(schema))
    #expect(WireLayoutDigest.of(schema).count == 32)
    let renamed = try EntitySchema(
      name: "Other", fields: schema.fields, idField: "id", indexes: schema.indexes)
    #expect(WireLayoutDigest.of(renamed) != WireLayoutDigest.of(schema))
    let cache = WireLayoutDigest.Cache()
    #expect(cache.digest(of: schema) == WireLayoutDigest.of(schema))
    cache.refuse(schema)
    #expect(cache.digest(of: schema) == nil)
    #expect(cache.digest(of: renamed) == WireLayoutDigest.of(renamed))
  }
}
