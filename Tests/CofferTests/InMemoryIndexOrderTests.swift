@_spi(Backend) import Coffer
import Testing

/// Pages of a thread read in the index order `InMemoryTables` keeps for (thread, date): each is
/// checked against the rows sorted by hand, through changes, and on snapshots whose nodes the
/// table shares until it writes.
@Suite struct InMemoryIndexOrderTests {
  let schema: EntitySchema

  init() throws {
    schema = try EntitySchema(
      name: "Message", fields: [Field("id", .int), Field("thread", .int), Field("date", .int)], idField: "id",
      indexes: [.on("thread", "date")])
  }

  /// The newest `limit` messages of a thread, ties by id.
  func page(_ thread: Int64, limit: Int = 10) -> Query {
    Query(
      entity: "Message", filter: .compare(field: "thread", op: .equal, value: .int(thread)),
      sort: [Sort("date", ascending: false)], limit: limit)
  }

  /// What ``page(_:limit:)`` must return from these rows.
  func expected(_ rows: [Int64: (thread: Int64, date: Int64)], thread: Int64, limit: Int = 10) -> [Value] {
    let ids = rows.filter { $0.value.thread == thread }.sorted { lhs, rhs in
      lhs.value.date != rhs.value.date ? lhs.value.date > rhs.value.date : lhs.key < rhs.key
    }
    return ids.prefix(limit).map { .int($0.key) }
  }

  /// The ids a query returns, read twice, which must agree.
  func twice(_ tables: InMemoryTables, _ query: Query) throws -> [Value] {
    let first = try tables.fetch(query).map { $0[0] }
    let second = try tables.fetch(query).map { $0[0] }
    #expect(first == second)
    return second
  }

  func apply(_ rows: [Int64: (thread: Int64, date: Int64)], to tables: inout InMemoryTables) throws {
    var changes = ChangeSet()
    for (id, row) in rows {
      changes.upsert(Row([.int(id), .int(row.thread), .int(row.date)]), in: "Message")
    }
    _ = try tables.apply(changes)
  }

  @Test func aSnapshotKeepsItsOrderWhenTheTableReranksARow() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var rows: [Int64: (thread: Int64, date: Int64)] = [:]
    for id in Int64(1)...200 { rows[id] = (id % 2, id * 10) }
    try apply(rows, to: &tables)
    // Read, then share the table's order with a snapshot.
    #expect(try twice(tables, page(0)) == expected(rows, thread: 0))
    let snapshot = tables
    let before = rows
    // Re-rank the oldest message of thread 0 to the newest: the table's order changes, the
    // snapshot's must not.
    rows[2] = (0, 5_000)
    try apply([2: (0, 5_000)], to: &tables)
    #expect(try twice(tables, page(0)) == expected(rows, thread: 0))
    #expect(try twice(snapshot, page(0)) == expected(before, thread: 0))
    // A snapshot taken before the first read.
    var fresh = InMemoryTables()
    try fresh.prepare([schema])
    try apply(before, to: &fresh)
    let early = fresh
    try apply([4: (0, 9_000)], to: &fresh)
    var after = before
    after[4] = (0, 9_000)
    #expect(try twice(early, page(0)) == expected(before, thread: 0))
    #expect(try twice(fresh, page(0)) == expected(after, thread: 0))
  }

  @Test func pagesMatchRowsSortedByHandThroughChangesAndSnapshots() throws {
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var rows: [Int64: (thread: Int64, date: Int64)] = [:]
    var state: UInt64 = 7
    func below(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    var snapshots: [(InMemoryTables, [Int64: (thread: Int64, date: Int64)])] = []
    for step in 0..<300 {
      var changes = ChangeSet()
      for _ in 0..<(step == 0 ? 400 : 1 + below(3)) {
        let id = Int64(below(500))
        if below(5) == 0 {
          changes.delete(id: .int(id), from: "Message")
          rows[id] = nil
        } else {
          let row = (thread: Int64(below(3)), date: Int64(below(50)))
          changes.upsert(Row([.int(id), .int(row.thread), .int(row.date)]), in: "Message")
          rows[id] = row
        }
      }
      _ = try tables.apply(changes)
      let thread = Int64(below(3))
      let limit = 1 + below(40)
      #expect(
        try twice(tables, page(thread, limit: limit))
          == expected(rows, thread: thread, limit: limit))
      if step.isMultiple(of: 30) { snapshots.append((tables, rows)) }
    }
    for (snapshot, rows) in snapshots {
      for thread in Int64(0)..<3 {
        #expect(
          try twice(snapshot, page(thread, limit: 500))
            == expected(rows, thread: thread, limit: 500))
      }
    }
  }
}
