@_spi(Backend) import Coffer
import CofferTestSupport
import CofferWire
import Foundation
import Testing

/// The hand-written batch JSON is `Codable`'s form exactly: random batches with every kind of
/// operation and precondition go both ways, one batch is one text whatever order its layouts
/// are in, and the hand reader refuses (for `JSONDecoder` to explain) what is not of that form.
@Suite struct WireBatchJSONTests {
  static func randomOperation(_ random: inout SeededGenerator) -> ChangeSet.Operation {
    let entity = ["Note", "ünï \"c\""][random.below(2)]
    func row() -> Row { Row((0..<random.below(5)).map { _ in WireRowsJSONTests.random(&random) }) }
    switch random.below(7) {
    case 0: return .insert(entity: entity, row: row())
    case 1: return .update(entity: entity, row: row())
    case 2: return .upsert(entity: entity, row: row())
    case 3: return .insertMany(entity: entity, rows: RowSource((0..<random.below(4)).map { _ in row() }))
    case 4: return .delete(entity: entity, id: WireRowsJSONTests.random(&random))
    case 5: return .deleteMatching(entity: entity, filter: WireQueryJSONTests.randomFilter(&random))
    default:
      return .updateMatching(
        entity: entity, filter: WireQueryJSONTests.randomFilter(&random),
        changes: (0..<random.below(3)).map { index in
          random.below(2) == 0
            ? .set("f\(index)", to: WireRowsJSONTests.random(&random)) : .add("n\(index)", .int(Int64(index)))
        })
    }
  }

  static func randomBatch(_ random: inout SeededGenerator) -> WireBatch {
    var batch = WireBatch(ChangeSet((0..<random.below(5)).map { _ in randomOperation(&random) }))
    if random.below(3) == 0 { batch.layoutDigests = ["Note": "0123abcd", "Other": "ffff"] }
    if random.below(3) == 0 {
      batch.preconditions = (0..<random.below(3)).map { _ in
        let query = WireQueryJSONTests.randomQuery(&random)
        return random.below(2) == 0
          ? WirePrecondition(query: query, rows: [[.int(1), .string("a")], []], count: nil)
          : WirePrecondition(query: query, rows: nil, count: random.below(10))
      }
    }
    if random.below(2) == 0 { batch.references = random.below(2) == 0 ? .enforce : .expanded }
    return batch
  }

  private func read(_ bytes: [UInt8]) -> WireBatch? { bytes.withUnsafeBytes { WireBatchJSON.read($0) } }

  /// Two batches by their `Codable` JSON with sorted keys: doubles by their digits.
  private func same(_ left: WireBatch, _ right: WireBatch) throws -> Bool {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    return try encoder.encode(left) == encoder.encode(right)
  }

  @Test func randomBatchesGoBothWaysWithCodable() throws {
    var random = SeededGenerator(seed: 4_403)
    for _ in 0..<300 {
      let batch = Self.randomBatch(&random)
      let hand = try WireBatchJSON.write(batch)
      #expect(try same(try JSONDecoder().decode(WireBatch.self, from: Data(hand)), batch))
      let formatter = JSONEncoder()
      formatter.outputFormatting = random.below(2) == 0 ? [.prettyPrinted, .sortedKeys] : []
      let codable = try #require(read(Array(try formatter.encode(batch))))
      #expect(try same(codable, batch), "the hand reader reads Codable's batch differently")
      #expect(try same(try #require(read(hand)), batch))
    }
  }

  @Test func wholeLayoutsAreOneTextAndLeftToJSONDecoder() throws {
    let other = try EntitySchema(name: "Other", fields: [Field("id", .string)], idField: "id")
    var batch = WireBatch(ChangeSet([.delete(entity: "Note", id: .int(1))]))
    var texts = Set<[UInt8]>()
    for _ in 0..<8 {
      // A dictionary's order differs from one value to the next; the text must not.
      batch.layouts = Dictionary(
        uniqueKeysWithValues: [("Note", Fixtures.notes), ("Other", other)].shuffled())
      texts.insert(try WireBatchJSON.write(batch))
    }
    #expect(texts.count == 1)
    let hand = try #require(texts.first)
    #expect(try same(try JSONDecoder().decode(WireBatch.self, from: Data(hand)), batch))
    #expect(read(hand) == nil)
  }

  @Test func refusesWhatIsNotTheBatchForm() throws {
    for text in [
      "", "{}", #"{"operations":[],"operations":[]}"#, #"{"operations":[],"other":1}"#,
      #"{"operations":[{"insert":{"entity":"E"}}]}"#, #"{"operations":[{"insert":{"row":[]}}]}"#,
      #"{"operations":[{"insert":{"entity":"E","row":[],"id":{"int":1}}}]}"#,
      #"{"operations":[{"insert":{"entity":"E","row":[]},"delete":{"entity":"E","id":{"int":1}}}]}"#,
      #"{"operations":[{"rename":{"entity":"E"}}]}"#,
      #"{"operations":[{"updateMatching":{"entity":"E","filter":{"all":true},"changes":[{"field":"a"}]}}]}"#,
      #"{"operations":[{"updateMatching":{"entity":"E","filter":{"all":true},"changes":[{"field":"a","set":{"int":1},"add":{"int":1}}]}}]}"#,
      #"{"operations":[],"references":"sometimes"}"#, #"{"operations":[],"layoutDigests":{"E":"a","E":"b"}}"#,
      #"{"operations":[],"preconditions":[{"rows":[]}]}"#, #"{"operations":[]} trailing"#,
    ] {
      #expect(read(Array(text.utf8)) == nil, "the hand reader took \(text)")
    }
    #expect(throws: EncodingError.self) {
      try WireBatchJSON.write(WireBatch(ChangeSet([.insert(entity: "E", row: Row([.double(.nan)]))])))
    }
  }
}
