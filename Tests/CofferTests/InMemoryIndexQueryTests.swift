@_spi(Backend) import Coffer
import Foundation
import Testing

/// Queries that `InMemoryTables` reads through its index orders (pinned fields, ranges, `isIn`,
/// sorts the index serves or not, pages) give what filtering and sorting every row gives,
/// through random changes.
@Suite struct InMemoryIndexQueryTests {
  let schema: EntitySchema

  init() throws {
    schema = try EntitySchema(
      name: "Item",
      fields: [
        Field("id", .int), Field("a", .int, isOptional: true), Field("b", .int), Field("c", .uuid),
        Field("d", .string, isOptional: true),
      ],
      idField: "id", indexes: [.on("a", "b"), .on("c"), .on("b", "a")])
  }

  static let uuids = (0..<4).map { UUID(uuid: (UInt8($0), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1)) }

  func row(_ id: Int, _ numbers: inout SeededNumbers) -> Row {
    Row([
      .int(Int64(id)),
      numbers.below(6) == 0 ? .null : .int(Int64(numbers.below(5))),
      .int(Int64(numbers.below(8))),
      .uuid(Self.uuids[numbers.below(Self.uuids.count)]),
      numbers.below(4) == 0 ? .null : .string(["x", "y", "z"][numbers.below(3)]),
    ])
  }

  func condition(_ numbers: inout SeededNumbers) -> Filter {
    let ops: [ComparisonOperator] = [
      .equal, .equal, .less, .lessOrEqual, .greater, .greaterOrEqual, .notEqual,
    ]
    switch numbers.below(7) {
    case 0, 1:
      return .compare(field: "a", op: ops[numbers.below(ops.count)], value: .int(Int64(numbers.below(6))))
    case 2:
      return .compare(field: "b", op: ops[numbers.below(ops.count)], value: .int(Int64(numbers.below(9))))
    case 3: return .isIn("a", (0..<numbers.below(3) + 1).map { _ in .int(Int64(numbers.below(6))) })
    case 4: return .compare(field: "c", op: .equal, value: .uuid(Self.uuids[numbers.below(Self.uuids.count)]))
    case 5: return .compare(field: "d", op: .equal, value: .string(["x", "y"][numbers.below(2)]))
    default:
      return .compare(field: "a", op: .equal, value: .null)
        || .compare(field: "b", op: .greater, value: .int(Int64(numbers.below(8))))
    }
  }

  func query(_ numbers: inout SeededNumbers) -> Query {
    let filter = (0..<numbers.below(4)).reduce(Filter.all) { filter, _ in filter && condition(&numbers) }
    let fields = ["a", "b", "id", "d"]
    let sort = (0..<numbers.below(4)).map { _ in
      Sort(fields[numbers.below(fields.count)], ascending: numbers.below(2) == 0)
    }
    let limit = numbers.below(3) == 0 ? nil : numbers.below(30)
    let offset = numbers.below(3) == 0 ? numbers.below(6) : 0
    return Query(entity: "Item", filter: filter, sort: sort, limit: limit, offset: offset)
  }

  /// What a query must return: every row filtered, then sorted and sliced.
  func expected(_ query: Query, _ rows: [Row]) throws -> [Row] {
    let compiled = try CompiledFilter(query.filter, schema: schema)
    let ordering = try RowOrdering(query.sort, schema: schema)
    let sorted = rows.filter(compiled.matches).sorted { ordering.compare($0, $1) < 0 }
    let start = min(query.offset, sorted.count)
    let end = query.limit.map { min(sorted.count, start + $0) } ?? sorted.count
    return Array(sorted[start..<end])
  }

  @Test(arguments: [11, 12, 13])
  func randomQueriesMatchFilteringAndSortingEveryRow(seed: Int) throws {
    var numbers = SeededNumbers(state: UInt64(seed))
    var tables = InMemoryTables()
    try tables.prepare([schema])
    var changes = ChangeSet()
    for id in 0..<600 { changes.insert(row(id, &numbers), into: "Item") }
    _ = try tables.apply(changes)
    for round in 0..<40 {
      var batch = ChangeSet()
      for _ in 0..<30 {
        let id = numbers.below(800)
        if numbers.below(3) == 0 {
          batch.delete(id: .int(Int64(id)), from: "Item")
        } else {
          batch.upsert(row(id, &numbers), in: "Item")
        }
      }
      _ = try tables.apply(batch)
      let snapshot = tables
      let rows = tables.allRows("Item")
      for _ in 0..<25 {
        let query = query(&numbers)
        let fetched = try tables.fetch(query)
        let wanted = try expected(query, rows)
        #expect(fetched.map { $0[0] } == wanted.map { $0[0] }, "round \(round): \(query)")
        let counted = try tables.count(Query(entity: "Item", filter: query.filter))
        #expect(
          counted == (try expected(Query(entity: "Item", filter: query.filter), rows)).count,
          "\(query.filter)")
      }
      // Changes after a snapshot leave it as it was.
      if round % 10 == 0 {
        _ = try tables.apply(
          ChangeSet([
            .deleteMatching(entity: "Item", filter: .compare(field: "b", op: .equal, value: .int(3)))
          ]))
        let query = Query(
          entity: "Item", filter: .compare(field: "b", op: .equal, value: .int(3)), sort: [Sort("a")])
        #expect(try snapshot.fetch(query) == (try expected(query, rows)))
        #expect(try tables.fetch(query).isEmpty)
      }
    }
  }
}
