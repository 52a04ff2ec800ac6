@_spi(Backend) import Coffer
import Foundation

/// Fails the check unless a double aggregate is `expected` within ``Aggregation/relativeTolerance``
/// of `magnitude` (the sum of the magnitudes of the values it adds up).
func expectClose(_ actual: Double?, _ expected: Double?, magnitude: Double, _ what: String) throws {
  guard let actual, let expected else {
    try expectEqual(actual, expected, what)
    return
  }
  if actual.isInfinite || expected.isInfinite {
    try expectEqual(actual, expected, what)
    return
  }
  let allowed = Aggregation.relativeTolerance * Swift.max(magnitude, 1)
  try expect(
    abs(actual - expected) <= allowed,
    "\(what): expected \(expected) within \(allowed), got \(actual).")
}

/// Cells holding doubles (and no other values), ids from 1.
func doubleCells(_ values: [Double?]) -> [Cell] {
  values.enumerated().map { Cell(id: Int64($0.offset + 1), double: $0.element) }
}

/// Tags holding counts, ids `t1`, `t2`, ….
func countTags(_ counts: [Int64]) -> [Tag] {
  counts.enumerated().map { Tag(id: "t\($0.offset + 1)", count: $0.element) }
}

extension ConformanceSuite {
  static let aggregateChecks: [ConformanceCheck] =
    aggregateValueChecks + aggregateNumberChecks + aggregateGroupChecks

  static let aggregateValueChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "aggregate.empty-set",
      "Over no rows, count and count(distinct:) are 0 and sum, min, max and average are nil."
    ) { context in
      let empty = try await context.store(with: [Item]())
      let none = try await context.store(with: Item.sample)
      for (query, what) in [
        (empty.query(Item.self), "an empty store"),
        (none.query(Item.self).filter(\.name == "nothing"), "a filter matching nothing"),
      ] {
        try expectEqual(try await query.count(), 0, "count over \(what)")
        try expectEqual(try await query.count(distinct: \.name), 0, "count(distinct:) over \(what)")
        try expectEqual(try await query.sum(\.rank), nil, "sum of ints over \(what)")
        try expectEqual(try await query.sum(\.score), nil, "sum of doubles over \(what)")
        try expectEqual(try await query.min(\.name), nil, "min over \(what)")
        try expectEqual(try await query.max(\.rank), nil, "max over \(what)")
        try expectEqual(try await query.average(\.rank), nil, "average over \(what)")
        try expectEqual(try await query.group(by: \.flag).count().count, 0, "groups over \(what)")
      }
    },
    ConformanceCheck(
      "aggregate.nulls-ignored",
      "Nulls are ignored by sum, min, max, average and count(distinct:); a field that is null in every "
        + "row gives nil (0 for the distinct count)."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self)
      try expectEqual(try await query.sum(\.rank), 15, "sum of rank (two nulls)")
      try expectEqual(try await query.min(\.rank), 1, "min of rank")
      try expectEqual(try await query.max(\.rank), 5, "max of rank")
      try expectEqual(try await query.average(\.rank), 2.5, "average of rank over its six values")
      try expectEqual(try await query.count(distinct: \.rank), 4, "distinct ranks")
      let nulls = query.filter(\.rank == nil)
      try expectEqual(try await nulls.count(), 2, "rows with a null rank are counted")
      try expectEqual(try await nulls.sum(\.rank), nil, "sum of nulls")
      try expectEqual(try await nulls.min(\.rank), nil, "min of nulls")
      try expectEqual(try await nulls.max(\.rank), nil, "max of nulls")
      try expectEqual(try await nulls.average(\.rank), nil, "average of nulls")
      try expectEqual(try await nulls.count(distinct: \.rank), 0, "distinct count of nulls")
    },
    ConformanceCheck(
      "aggregate.min-max-ints", "min and max of integers are exact at the ends of Int64."
    ) { context in
      let store = try await context.store(with: countTags([7, .min, 0, .max, -1]))
      try expectEqual(try await store.query(Tag.self).min(\.count), .min, "min")
      try expectEqual(try await store.query(Tag.self).max(\.count), .max, "max")
    },
    ConformanceCheck(
      "aggregate.min-max-doubles", "min and max of doubles order -infinity before numbers before +infinity."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.query(Item.self).min(\.score), -.infinity, "min")
      try expectEqual(try await store.query(Item.self).max(\.score), .infinity, "max")
      let finite = store.query(Item.self).filter(\.id != 5 && \.id != 7)
      try expectEqual(try await finite.min(\.score), -2.0, "min of the finite scores")
      try expectEqual(try await finite.max(\.score), 2.5, "max of the finite scores")
    },
    ConformanceCheck(
      "aggregate.min-max-strings",
      "min and max of strings are by Unicode code point (binary UTF-8), not by a locale's collation."
    ) { context in
      let store = try await context.store(
        with: descendingIDCells(Array(orderedTexts.reversed())) { Cell(id: $0, text: $1) })
      try expectEqual(try await store.query(Cell.self).min(\.text), "", "min")
      try expectEqual(try await store.query(Cell.self).max(\.text), "\u{E9}", "max")
      let words = store.query(Cell.self).filter(\.text != "")
      try expectEqual(try await words.min(\.text), "Z", "min of the non-empty strings")
      try expectEqual(
        try await words.filter(\.text < "\u{C4}").max(\.text), "zebra", "max below \u{C4}")
    },
    ConformanceCheck(
      "aggregate.min-max-dates",
      "min and max of dates are chronological, to the microsecond, before 1970 too."
    ) { context in
      let dates = [-86_400.000_001, -0.5, 0, 1_700_000_000.000_001, 1_700_000_000.000_002].map {
        Date(timeIntervalSince1970: $0)
      }
      let store = try await context.store(with: descendingIDCells(dates) { Cell(id: $0, date: $1) })
      let min = try await store.query(Cell.self).min(\.date)
      let max = try await store.query(Cell.self).max(\.date)
      try expectEqual(min.map { Value.microseconds(since1970: $0) }, -86_400_000_001, "min in microseconds")
      try expectEqual(
        max.map { Value.microseconds(since1970: $0) }, 1_700_000_000_000_002, "max in microseconds")
    },
    ConformanceCheck(
      "aggregate.min-max-uuids-bools-bytes",
      "min and max of UUIDs and bytes are by their bytes, unsigned; of bools, false before true."
    ) { context in
      let uuids = [uuid(0, last: 1), uuid(0x7F, last: 0xFF), uuid(0x80, last: 0), uuid(0xFF, last: 0xFE)]
      let bytes = [Data(), Data([0x00]), Data([0x7F, 0xFF]), Data([0x80]), Data([0xFF, 0x00])]
      var cells = descendingIDCells(uuids) { Cell(id: $0, uuid: $1) }
      for (index, data) in bytes.enumerated() { cells.append(Cell(id: Int64(10 + index), bytes: data)) }
      cells.append(Cell(id: 20, bool: true))
      cells.append(Cell(id: 21, bool: false))
      let store = try await context.store(with: cells)
      let query = store.query(Cell.self)
      try expectEqual(try await query.min(\.uuid), uuids.first, "min uuid")
      try expectEqual(try await query.max(\.uuid), uuids.last, "max uuid")
      try expectEqual(try await query.min(\.bytes), Data(), "min bytes")
      try expectEqual(try await query.max(\.bytes), Data([0xFF, 0x00]), "max bytes")
      try expectEqual(try await query.min(\.bool), false, "min bool")
      try expectEqual(try await query.max(\.bool), true, "max bool")
      try expectEqual(try await query.filter(\.bool == true).min(\.bool), true, "min of true alone")
    },
    ConformanceCheck(
      "aggregate.count-distinct",
      "count(distinct:) counts distinct non-null values: strings by their bytes, -0.0 and 0.0 as one."
    ) { context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.query(Item.self).count(distinct: \.name), 7, "distinct names")
      try expectEqual(try await store.query(Item.self).count(distinct: \.flag), 2, "distinct flags")
      let texts = ["e\u{301}", "\u{E9}", "a", "A", "a"].enumerated().map {
        Cell(id: Int64($0.offset), text: $0.element)
      }
      let cells = try await context.store(
        with: texts + [Cell(id: 10, double: -0.0), Cell(id: 11, double: 0.0)])
      try expectEqual(try await cells.query(Cell.self).count(distinct: \.text), 4, "distinct texts")
      try expectEqual(try await cells.query(Cell.self).count(distinct: \.double), 1, "-0.0 and 0.0")
    },
    ConformanceCheck(
      "aggregate.invalid-field",
      "A sum or average of a field that is not a number is invalidQuery, naming the entity and field."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let error = try await expectThrows(.invalidQuery, "average of a string field") {
        try await store.aggregateRows(Aggregation(entity: "Item", .average("name")))
      }
      try expectMentions(error, ["Item", "name"], "the error")
      try await expectThrows(.invalidQuery, "sum of a bool field") {
        try await store.aggregateRows(Aggregation(entity: "Item", .sum("flag")))
      }
      try await expectThrows(.invalidQuery, "min of an unknown field") {
        try await store.aggregateRows(Aggregation(entity: "Item", .min("nope")))
      }
    },
  ]
}
