@_spi(Backend) import Coffer
import Foundation

/// Items made from a seed: ranks and scores spread over ties, nulls, signs and large magnitudes,
/// names from a few that differ in case and accents, so that groups have several rows.
func generatedItems(seed: UInt64, count: Int) -> [Item] {
  var random = SplitMix64(seed: seed)
  let names = ["a", "B", "b", "é", "e\u{301}", "", "zz"]
  return (1...count).map { id in
    let rank: Int64? =
      random.chance(15)
      ? nil : random.pick([Int64(random.below(7)) - 3, Int64(random.below(2_000_000)) << 30])
    let score: Double? = random.chance(20) ? nil : Double(Int(random.next() % 2_000_001) - 1_000_000) / 64
    return Item(id: Int64(id), name: random.pick(names), rank: rank, score: score, flag: random.chance(50))
  }
}

/// The items grouped by a key, in ascending key order with nil first, as a caller would by hand.
func byHand<K: Comparable & Hashable>(_ items: [Item], _ key: (Item) -> K?) -> [(key: K?, items: [Item])] {
  let keys = Set(items.map(key))
  let sorted = keys.sorted { lhs, rhs in
    switch (lhs, rhs) {
    case (nil, nil): false
    case (nil, _): true
    case (_, nil): false
    case (let a?, let b?): a < b
    }
  }
  return sorted.map { k in (k, items.filter { key($0) == k }) }
}

extension ConformanceSuite {
  static let aggregateGroupChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "aggregate.group-order-nulls",
      "Groups come in ascending key order by Coffer's value order, all nulls one group and first; string "
        + "keys by code point."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let byRank = try await store.query(Item.self).group(by: \.rank).count()
      try expectEqual(byRank.map(\.key), [nil, 1, 2, 3, 5], "rank keys")
      try expectEqual(byRank.map(\.value), [2, 2, 1, 2, 1], "rows per rank")
      let byName = try await store.query(Item.self).group(by: \.name).count()
      try expectEqual(
        byName.map(\.key), ["", "100%_off*", "Banana", "apple", "cherry", "date", "\u{C9}CLAIR"], "name keys")
      try expectEqual(byName.map(\.value), [1, 1, 1, 2, 1, 1, 1], "rows per name")
      let byFlag = try await store.query(Item.self).group(by: \.flag).count()
      try expectEqual(byFlag.map(\.key), [false, true], "bool keys")
      let cells = try await context.store(with: [
        Cell(id: 1, double: 0.0), Cell(id: 2, double: -0.0), Cell(id: 3, double: -.infinity), Cell(id: 4),
      ])
      let byDouble = try await cells.query(Cell.self).group(by: \.double).count()
      try expectEqual(byDouble.map(\.key), [nil, -.infinity, 0.0], "double keys: -0.0 and 0.0 one group")
      try expectEqual(byDouble.map(\.value), [1, 1, 2], "rows per double")
      try expectEqual(byDouble.last?.key?.sign, .plus, "the zero key is +0.0")
    },
    ConformanceCheck(
      "aggregate.group-functions",
      "Grouped sum, min, max, average and count(distinct:) are computed per group; a group whose values "
        + "are all null has nil for them."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).filter(\.id != 5 && \.id != 7)
      let byFlag = query.group(by: \.flag)
      try expectEqual(try await byFlag.sum(\.rank).map(\.value), [4, 4], "sum of rank per flag")
      try expectEqual(try await byFlag.sum(\.score).map(\.value), [0.5, 1.5], "sum of score per flag")
      try expectEqual(try await byFlag.min(\.name).map(\.value), ["", "apple"], "min name per flag")
      try expectEqual(try await byFlag.max(\.score).map(\.value), [2.5, 1.5], "max score per flag")
      try expectEqual(try await byFlag.average(\.rank).map(\.value), [2.0, 2.0], "average rank per flag")
      try expectEqual(
        try await byFlag.count(distinct: \.name).map(\.value), [4, 2], "distinct names per flag")
      let byRank = query.group(by: \.rank)
      let scores = try await byRank.sum(\.score)
      try expectEqual(scores.map(\.key), [nil, 1, 3], "rank keys")
      try expectEqual(scores.map(\.value), [-2.0, 2.5, 1.5], "sum of score per rank")
      let onlyNull = try await store.query(Item.self).filter(\.id == 3 || \.id == 6).group(by: \.flag)
        .average(\.score)
      try expectEqual(onlyNull.map(\.value), [nil, nil], "groups whose scores are all null")
    },
    ConformanceCheck(
      "aggregate.filter-combined",
      "An aggregate reads only the rows its filter selects; sort, offset and limit do not change it."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let query = store.query(Item.self).filter(\.flag == true && \.rank != nil)
      try expectEqual(try await query.group(by: \.rank).count().map(\.key), [1, 2, 3, 5], "keys")
      try expectEqual(try await query.sum(\.rank), 11, "sum")
      try expectEqual(try await query.max(\.name), "\u{C9}CLAIR", "max name (by code point)")
      let sliced = query.sort(\.rank, .descending).offset(1).limit(2)
      try expectEqual(try await sliced.sum(\.rank), 11, "sum of a sliced query")
      try expectEqual(
        try await sliced.group(by: \.flag).count().map(\.value), [4], "groups of a sliced query")
      try expectEqual(
        try await store.query(Item.self).filter(.contains(\.name, "a") || \.score < 0).min(\.score),
        -.infinity,
        "min under an or")
    },
    ConformanceCheck(
      "aggregate.grouped-by-hand",
      "Over 300 generated rows, every aggregate, grouped and not, equals computing it by hand from all values."
    ) { context in
      let items = generatedItems(seed: 0xA66_2E6A7E, count: 300)
      let store = try await context.store(with: items)
      for filter in [nil, \Item.flag == true] as [KeyPathFilter<Item>?] {
        let query = filter.map { store.query(Item.self).filter($0) } ?? store.query(Item.self)
        let all = try await query.fetch()
        try expectEqual(all.count, items.filter { filter == nil || $0.flag }.count, "rows selected")
        let groups = byHand(all) { $0.name.unicodeScalars.map(\.value).description }
        let names = try await query.group(by: \.name).count()
        try expectEqual(names.count, groups.count, "name groups")
        let byFlag = byHand(all) { $0.flag ? 1 : 0 }
        let flagGroups = query.group(by: \.flag)
        let counts = try await flagGroups.count()
        let sums = try await flagGroups.sum(\.rank)
        let scores = try await flagGroups.sum(\.score)
        let averages = try await flagGroups.average(\.rank)
        let mins = try await flagGroups.min(\.name)
        let maxima = try await flagGroups.max(\.score)
        let distinct = try await flagGroups.count(distinct: \.rank)
        try expectEqual(counts.map(\.key), byFlag.map { $0.key == 1 }, "flag keys")
        for (index, group) in byFlag.enumerated() {
          let ranks = group.items.compactMap(\.rank)
          let values = group.items.compactMap(\.score)
          let what = "group \(group.key ?? -1)"
          try expectEqual(counts[index].value, group.items.count, "count of \(what)")
          try expectEqual(sums[index].value, ranks.isEmpty ? nil : ranks.reduce(0, +), "sum of rank, \(what)")
          try expectClose(
            scores[index].value, values.isEmpty ? nil : values.reduce(0, +),
            magnitude: values.map(abs).reduce(0, +), "sum of score, \(what)")
          try expectClose(
            averages[index].value, ranks.isEmpty ? nil : Double(ranks.reduce(0, +)) / Double(ranks.count),
            magnitude: Double(ranks.map { $0.magnitude }.reduce(0, +)) / Double(Swift.max(ranks.count, 1)),
            "average of rank, \(what)")
          try expectEqual(
            mins[index].value, group.items.map(\.name).min { ValueOrder.compareUTF8($0, $1) < 0 },
            "min name, \(what)")
          try expectEqual(maxima[index].value, values.max(), "max score, \(what)")
          try expectEqual(distinct[index].value, Set(ranks).count, "distinct ranks, \(what)")
        }
        let rankGroups = try await query.group(by: \.rank).count()
        let rankByHand = byHand(all) { $0.rank }
        try expectEqual(rankGroups.map(\.key), rankByHand.map(\.key), "rank keys, nil first")
        try expectEqual(rankGroups.map(\.value), rankByHand.map(\.items.count), "rows per rank")
      }
    },
  ]
}
