@_spi(Backend) import Coffer
import Testing

/// A small slice of a large input is found by a bounded selection; it must be exactly the
/// slice a full sort gives.
@Suite struct RowOrderingTests {
  @Test(arguments: [0, 1, 2, 3])
  func aSmallSliceIsTheFullSortsSlice(seed: Int) throws {
    let schema = try EntitySchema(
      name: "T", fields: [Field("id", .int), Field("group", .int, isOptional: true), Field("name", .string)],
      idField: "id")
    // A fixed linear congruential sequence per seed, so a failure replays.
    var state = UInt64(seed) &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
    func next(_ bound: Int) -> Int {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Int((state >> 33) % UInt64(bound))
    }
    var rows = (0..<3_000).map { id -> Row in
      let group: Value = next(10) == 0 ? .null : .int(Int64(next(40)))
      return Row([.int(Int64(id)), group, .string("n\(next(25))")])
    }
    for position in rows.indices.reversed() { rows.swapAt(position, next(position + 1)) }
    let sorts: [[Sort]] = [
      [], [Sort("group")], [Sort("group", ascending: false)], [Sort("name"), Sort("group")],
    ]
    for sort in sorts {
      let ordering = try RowOrdering(sort, schema: schema)
      let full = rows.sorted { ordering.compare($0, $1) < 0 }
      for (offset, limit) in [(0, 1), (0, 50), (7, 13), (100, 256), (250, 6), (0, 0), (2_999, 5), (3, 400)] {
        let expected = Array(full.dropFirst(offset).prefix(limit))
        #expect(
          ordering.orderedSlice(rows, offset: offset, limit: limit) == expected,
          "sort \(sort.map(\.field)), offset \(offset), limit \(limit)")
      }
    }
  }
}
