@_spi(Backend) import Coffer
import Foundation

/// Cells made from values listed in ascending order, with ids in the opposite order so that id
/// order never passes for value order.
func descendingIDCells<V>(_ values: [V], _ make: (Int64, V) -> Cell) -> [Cell] {
  values.enumerated().map { make(Int64(values.count - $0.offset), $0.element) }
}

/// A check that sorting ``descendingIDCells(_:_:)`` by `field` gives the listed order ascending
/// and its reverse descending.
func cellOrderCheck(_ id: String, _ rule: String, field: String, _ cells: @escaping @Sendable () -> [Cell])
  -> ConformanceCheck
{
  ConformanceCheck(id, rule) { context in
    let cells = cells()
    let store = try await context.store(with: cells)
    let ascending = cells.map(\.id)
    try await expectIDs(
      store.query(Cell.self).sort([Sort(field)]), ascending, "ids sorted by \(field) ascending")
    try await expectIDs(
      store.query(Cell.self).sort([Sort(field, ascending: false)]), ascending.reversed(),
      "ids sorted by \(field) descending")
  }
}

/// A UUID whose 16 bytes are all `byte` except the last, which is `last`.
func uuid(_ byte: UInt8, last: UInt8) -> UUID {
  let b = byte
  return UUID(uuid: (b, b, b, b, b, b, b, b, b, b, b, b, b, b, b, last))
}

extension ConformanceSuite {
  static let sortChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "sort.ascending-nulls-first", "Ascending order puts nulls first, then smaller values first."
    ) {
      context in
      let store = try await context.store(with: Item.sample.reversed())
      try await expectIDs(
        store.query(Item.self).sort(\.rank), [2, 6, 3, 8, 5, 1, 4, 7], "by rank")
      try await expectIDs(
        store.query(Item.self).sort(\.score), [3, 6, 7, 2, 4, 1, 8, 5], "by score")
    },
    ConformanceCheck(
      "sort.descending-nulls-last", "Descending order puts larger values first and nulls last."
    ) {
      context in
      let store = try await context.store(with: Item.sample.reversed())
      try await expectIDs(
        store.query(Item.self).sort(\.rank, .descending), [7, 1, 4, 5, 3, 8, 2, 6], "by rank")
      try await expectIDs(
        store.query(Item.self).sort(\.score, .descending), [5, 8, 1, 4, 2, 7, 3, 6], "by score")
    },
    ConformanceCheck("sort.multi-key", "Later sort keys order rows that tie on earlier keys.") { context in
      let store = try await context.store(with: Item.sample.reversed())
      try await expectIDs(
        store.query(Item.self).sort(\.flag).sort(\.rank, .descending),
        [4, 8, 2, 6, 7, 1, 5, 3], "by flag ascending, rank descending")
    },
    ConformanceCheck(
      "sort.ties-by-id", "Rows that tie on every sort key are ordered by id ascending, in either direction."
    ) { context in
      let store = try await context.store(with: Item.sample.reversed())
      try await expectIDs(
        store.query(Item.self).sort(\.flag, .descending), [1, 3, 5, 7, 2, 4, 6, 8], "by flag desc")
      try await expectIDs(
        store.query(Item.self).sort(\.flag), [2, 4, 6, 8, 1, 3, 5, 7], "by flag asc")
      try await expectIDs(store.query(Item.self), [1, 2, 3, 4, 5, 6, 7, 8], "with no sort keys")
    },
    cellOrderCheck(
      "sort.strings-code-point", "Strings sort by Unicode code point: \"Z\" < \"a\" < \"e\\u{301}\" < \"é\".",
      field: "text"
    ) { descendingIDCells(orderedTexts) { Cell(id: $0, text: $1) } },
    cellOrderCheck("sort.uuids-by-bytes", "UUIDs sort by their 16 bytes, unsigned.", field: "uuid") {
      descendingIDCells([
        uuid(0, last: 0), uuid(0, last: 1), uuid(0x7F, last: 0xFF), uuid(0x80, last: 0),
        uuid(0xFF, last: 0xFE), uuid(0xFF, last: 0xFF),
      ]) {
        Cell(id: $0, uuid: $1)
      }
    },
    cellOrderCheck(
      "sort.bytes-unsigned", "Bytes sort lexicographically as unsigned, a prefix before longer data.",
      field: "bytes"
    ) {
      descendingIDCells([
        Data(), Data([0]), Data([0, 0]), Data([0, 1]), Data([1]), Data([0x7F]), Data([0x80]), Data([0xFF]),
        Data([0xFF, 0]),
      ]) {
        Cell(id: $0, bytes: $1)
      }
    },
    cellOrderCheck(
      "sort.dates-chronological",
      "Dates sort chronologically to the microsecond, before 1970 and far ahead too.",
      field: "date"
    ) {
      descendingIDCells([
        -62_135_596_800, -10_000_000_000, -1.000001, -0.000001, 0, 0.000001, 0.000002, 1.5, 2_000_000_000,
        253_402_300_799,
      ]) {
        Cell(id: $0, date: Date(timeIntervalSince1970: $1))
      }
    },
    cellOrderCheck(
      "sort.doubles-numeric", "Doubles sort numerically, from -infinity to +infinity.", field: "double"
    ) {
      descendingIDCells([
        -Double.infinity, -1e300, -1, -Double.leastNonzeroMagnitude, 0, .leastNonzeroMagnitude, 1, 1e300,
        .infinity,
      ]) { Cell(id: $0, double: $1) }
    },
    cellOrderCheck("sort.bools", "false sorts before true.", field: "bool") {
      descendingIDCells([false, true]) { Cell(id: $0, bool: $1) }
    },
    ConformanceCheck(
      "sort.string-ids-code-point", "String ids order by code point when nothing else is sorted."
    ) {
      context in
      let ids = [" ", "B", "a", "b", "e\u{301}", "\u{E9}", "\u{1F600}"]
      let store = try await context.store(with: ids.reversed().map { Tag(id: $0, count: 0) })
      let got = try await store.all(Tag.self).map(\.id)
      try expect(
        got.count == ids.count && zip(got, ids).allSatisfy { $0.utf8.elementsEqual($1.utf8) },
        "all(Tag) ids: expected \(ids.map(\.debugDescription)), got \(got.map(\.debugDescription))")
    },
  ]
}
