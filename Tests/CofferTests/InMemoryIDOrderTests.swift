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

  /// The ids that the queries below must return, worked out from all rows.
  func expected(_ rows: [Row], filter: (Row) -> Bool, ascending: Bool, offset: Int, limit: Int) -> [Value] {
    let sorted = rows.filter(filter).map { $0[0] }.sorted { ValueOrder.compare($0, $1) < 0 }
    return Array((ascending ? sorted : sorted.reversed()).dropFirst(offset).prefix(limit))
  }

  func check(_ tables: InMemoryTables, _ rows: [Row], _ numbers: inout SeededNumbers) throws {
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
      // Without a limit too: the walk then goes through every id.
      let all = try tables.fetch(Query(entity: "Keyed", filter: filter, sort: sort)).map { $0[0] }
      #expect(
        all == expected(rows, filter: matches, ascending: ascending, offset: 0, limit: .max), "\(filter)")
    }
  }

  /// A snapshot taken before any read worked the order out, then a removal and a read on the
  /// table: the order the table works out must not be the one the snapshot reads, which still
  /// has the removed row.
  @Test func aRemovalDoesNotHideARowFromASnapshotThatSharedNoOrderYet() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var changes = ChangeSet()
    for key in 0..<5 { changes.upsert(Row([.string("k\(key)"), .int(Int64(key))]), in: "Keyed") }
    _ = try tables.apply(changes)
    let snapshot = tables
    var removal = ChangeSet()
    removal.delete(id: .string("k2"), from: "Keyed")
    _ = try tables.apply(removal)
    let page = Query(entity: "Keyed", sort: [Sort("id")], limit: 10)
    #expect(try tables.fetch(page).map { $0[0] } == ["k0", "k1", "k3", "k4"].map { Value.string($0) })
    #expect(
      try snapshot.fetch(page).map { $0[0] } == ["k0", "k1", "k2", "k3", "k4"].map { Value.string($0) })
    // The other way round: the snapshot reads first, then the table.
    let second = tables
    var another = ChangeSet()
    another.delete(id: .string("k3"), from: "Keyed")
    _ = try tables.apply(another)
    #expect(try second.fetch(page).map { $0[0] } == ["k0", "k1", "k3", "k4"].map { Value.string($0) })
    #expect(try tables.fetch(page).map { $0[0] } == ["k0", "k1", "k4"].map { Value.string($0) })
  }

  /// A full read hands over the rows the last one gathered only while no row changed: an
  /// update, an insert and a removal each show in the next full read, and a snapshot taken
  /// after a full read keeps reading its own rows.
  @Test func aFullReadSeesEveryChangeSinceTheLastOne() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var changes = ChangeSet()
    for key in 0..<5 { changes.upsert(Row([.string("k\(key)"), .int(Int64(key))]), in: "Keyed") }
    _ = try tables.apply(changes)
    let scan = Query(entity: "Keyed")
    func numbers(_ tables: InMemoryTables) throws -> [Value] { try tables.fetch(scan).map { $0[1] } }
    #expect(try numbers(tables) == [0, 1, 2, 3, 4].map { Value.int($0) })
    #expect(try numbers(tables) == [0, 1, 2, 3, 4].map { Value.int($0) })
    let snapshot = tables
    var update = ChangeSet()
    update.upsert(Row([.string("k1"), .int(10)]), in: "Keyed")
    _ = try tables.apply(update)
    #expect(try numbers(tables) == [0, 10, 2, 3, 4].map { Value.int($0) })
    #expect(try numbers(snapshot) == [0, 1, 2, 3, 4].map { Value.int($0) })
    var insert = ChangeSet()
    insert.upsert(Row([.string("k5"), .int(5)]), in: "Keyed")
    _ = try tables.apply(insert)
    #expect(try numbers(tables) == [0, 10, 2, 3, 4, 5].map { Value.int($0) })
    var removal = ChangeSet()
    removal.delete(id: .string("k0"), from: "Keyed")
    _ = try tables.apply(removal)
    #expect(try numbers(tables) == [10, 2, 3, 4, 5].map { Value.int($0) })
    #expect(try numbers(snapshot) == [0, 1, 2, 3, 4].map { Value.int($0) })
  }

  /// An equality on a unique field, with a limit, finds its row through the field's lookup, and
  /// a count of an equality is the lookup's size: both agree with every row tested by hand.
  @Test func aNarrowLookupAndItsCountAgreeWithTheRows() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var changes = ChangeSet()
    for key in 0..<300 { changes.upsert(Row([.string("k\(key)"), .int(Int64(key % 7))]), in: "Keyed") }
    _ = try tables.apply(changes)
    for n in 0..<8 {
      let filter = Filter.compare(field: "n", op: .equal, value: .int(Int64(n)))
      let expected = (0..<300).filter { $0 % 7 == n }.map { Value.string("k\($0)") }
        .sorted { ValueOrder.compare($0, $1) < 0 }
      #expect(try tables.count(Query(entity: "Keyed", filter: filter)) == expected.count)
      let first = try tables.fetch(Query(entity: "Keyed", filter: filter, sort: [Sort("id")], limit: 1))
      #expect(first.map { $0[0] } == Array(expected.prefix(1)))
    }
  }

  @Test func idOrderedPagesMatchRowsSortedByHandThroughChangesAndSnapshots() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var shadow: [Value: Row] = [:]
    var numbers = SeededNumbers(state: 11)
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
