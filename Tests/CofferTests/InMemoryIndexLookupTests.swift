@_spi(Backend) import Coffer
import Testing

/// The index orders `InMemoryTables` keeps narrow an equality or `isIn` on an indexed field
/// without changing its answer: every query here is checked against a filter over all rows.
@Suite struct InMemoryIndexLookupTests {
  let schema: EntitySchema

  init() throws {
    schema = try EntitySchema(
      name: "Tagged",
      fields: [Field("id", .int), Field("tag", .string, isOptional: true), Field("n", .int)],
      idField: "id", indexes: [.on("tag", "n")])
  }

  func row(_ id: Int64, _ tag: String?, _ n: Int64) -> Row {
    Row([.int(id), tag.map(Value.string) ?? .null, .int(n)])
  }

  @Test func equalityAndInOnAnIndexedFieldMatchAFullScanThroughInsertsUpdatesAndDeletes() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var shadow: [Int64: Row] = [:]
    var numbers = SeededNumbers(state: 7)
    let tags: [String?] = ["a", "b", "c", "é", "e\u{301}", nil]
    for _ in 0..<300 {
      var changes = ChangeSet()
      let id = Int64(numbers.below(60))
      switch numbers.below(3) {
      case 0:
        let new = row(id, tags[numbers.below(tags.count)], Int64(numbers.below(5)))
        changes.upsert(new, in: "Tagged")
        shadow[id] = new
      case 1:
        changes.delete(id: .int(id), from: "Tagged")
        shadow[id] = nil
      default:
        if var existing = shadow[id] {
          existing.values[1] = tags[numbers.below(tags.count)].map(Value.string) ?? .null
          changes.update(existing, in: "Tagged")
          shadow[id] = existing
        }
      }
      if !changes.isEmpty { _ = try tables.apply(changes) }
      for tag in tags.compactMap({ $0 }) {
        let equal = try tables.fetch(
          Query(entity: "Tagged", filter: .compare(field: "tag", op: .equal, value: .string(tag))))
        #expect(Set(equal.map { $0[0] }) == Set(shadow.values.filter { $0[1] == .string(tag) }.map { $0[0] }))
      }
      let pair = try tables.fetch(
        Query(
          entity: "Tagged",
          filter: .isIn("tag", [.string("a"), .string("é")])
            && .compare(field: "n", op: .less, value: .int(3))))
      let expected = shadow.values.filter {
        guard case .int(let n) = $0[2] else { return false }
        return ($0[1] == .string("a") || $0[1] == .string("é")) && n < 3
      }
      #expect(Set(pair.map { $0[0] }) == Set(expected.map { $0[0] }))
    }
  }
}
