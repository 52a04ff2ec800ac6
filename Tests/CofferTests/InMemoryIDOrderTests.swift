@_spi(Backend) import Coffer
import Testing

/// Reads ordered by id with a limit walk the ids `InMemoryTables` keeps in order instead of
/// sorting every row: each is checked against the rows sorted by hand, through changes, and on
/// snapshots taken before and after the order was worked out.
@Suite struct InMemoryIDOrderTests {
  let schema: EntitySchema

  init() throws {
    schema = try EntitySchema(
      name: "Keyed", fields: [Field("id", .string), Field("n", .int)], idField: "id", indexes: [.on("n")])
  }

  /// A deterministic stream of small numbers.
  struct Numbers {
    var state: UInt64
    mutating func below(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
  }

  /// The ids that the queries below must return, worked out from all rows.
  func expected(_ rows: [Row], filter: (Row) -> Bool, ascending: Bool, offset: Int, limit: Int) -> [Value] {
    let sorted = rows.filter(filter).map { $0[0] }.sorted { ValueOrder.compare($0, $1) < 0 }
    return Array((ascending ? sorted : sorted.reversed()).dropFirst(offset).prefix(limit))
  }

  func check(_ tables: InMemoryTables, _ rows: [Row], _ numbers: inout Numbers) throws {
    let bound = Value.string("k\(numbers.below(120))")
    let offset = numbers.below(4)
    let limit = 1 + numbers.below(30)
    let pages: [(Filter, [Sort], Bool, (Row) -> Bool)] = [
      (
        .compare(field: "id", op: .greater, value: bound), [Sort("id")], true,
        { ValueOrder.compare($0[0], bound) > 0 }
      ),
      (
        .compare(field: "id", op: .greaterOrEqual, value: bound), [], true,
        { ValueOrder.compare($0[0], bound) >= 0 }
      ),
      (
        .compare(field: "n", op: .less, value: .int(3)), [Sort("id", ascending: false)], false,
        {
          guard case .int(let n) = $0[1] else { return false }
          return n < 3
        }
      ),
      (.all, [Sort("id")], true, { _ in true }),
    ]
    for (filter, sort, ascending, matches) in pages {
      let query = Query(entity: "Keyed", filter: filter, sort: sort, limit: limit, offset: offset)
      let got = try tables.fetch(query).map { $0[0] }
      #expect(
        got == expected(rows, filter: matches, ascending: ascending, offset: offset, limit: limit),
        "\(filter)")
    }
  }

  @Test func idOrderedPagesMatchRowsSortedByHandThroughChangesAndSnapshots() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var shadow: [Value: Row] = [:]
    var numbers = Numbers(state: 11)
    var snapshots: [(InMemoryTables, [Row])] = []
    for step in 0..<400 {
      var changes = ChangeSet()
      let id = Value.string("k\(numbers.below(120))")
      if numbers.below(4) == 0 {
        changes.delete(id: id, from: "Keyed")
        shadow[id] = nil
      } else {
        let row = Row([id, .int(Int64(numbers.below(6)))])
        changes.upsert(row, in: "Keyed")
        shadow[id] = row
      }
      _ = try tables.apply(changes)
      try check(tables, Array(shadow.values), &numbers)
      if step.isMultiple(of: 50) { snapshots.append((tables, Array(shadow.values))) }
    }
    // Each snapshot still answers for the rows it was taken with, whatever changed since.
    for (snapshot, rows) in snapshots { try check(snapshot, rows, &numbers) }
  }
}
