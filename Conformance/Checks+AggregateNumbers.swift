@_spi(Backend) import Coffer
import Foundation

extension ConformanceSuite {
  static let aggregateNumberChecks: [ConformanceCheck] = [
    ConformanceCheck("aggregate.sum-ints", "A sum of integers is exact, with or without a filter.") {
      context in
      let store = try await context.store(with: Item.sample)
      try expectEqual(try await store.query(Item.self).sum(\.rank), 15, "sum of rank")
      try expectEqual(try await store.query(Item.self).filter(\.flag == true).sum(\.rank), 11, "flagged")
      let big = try await context.store(with: countTags([.max - 10, 4, 6, -1]))
      try expectEqual(try await big.query(Tag.self).sum(\.count), .max - 1, "near Int64.max")
    },
    ConformanceCheck(
      "aggregate.sum-overflow",
      "A sum of integers outside Int64 is valueOutOfRange naming entity and field, never a wrapped "
        + "number; one whose running total leaves Int64 but whose result fits is exact."
    ) { context in
      let over = try await context.store(with: countTags([.max, 1]))
      let error = try await expectThrows(.valueOutOfRange, "Int64.max + 1") {
        try await over.query(Tag.self).sum(\.count)
      }
      try expectMentions(error, ["Tag", "count"], "the error")
      let under = try await context.store(with: countTags([.min, -1, 0]))
      try await expectThrows(.valueOutOfRange, "Int64.min - 1") {
        try await under.query(Tag.self).sum(\.count)
      }
      let grouped = try await context.store(with: [
        Item(id: 1, name: "a", rank: .max, score: nil, flag: true),
        Item(id: 2, name: "b", rank: 1, score: nil, flag: true),
        Item(id: 3, name: "c", rank: .max, score: nil, flag: false),
      ])
      try await expectThrows(.valueOutOfRange, "a group's sum") {
        try await grouped.query(Item.self).group(by: \.flag).sum(\.rank)
      }
      try expectEqual(
        try await grouped.query(Item.self).filter(\.id != 2).group(by: \.flag).sum(\.rank).map(\.value),
        [.max, .max], "the groups' sums without the overflow")
      let back = try await context.store(with: countTags([.max, 1, 1, .min, .max, -2]))
      try expectEqual(try await back.query(Tag.self).sum(\.count), .max - 1, "exact after leaving Int64")
      try expectClose(
        try await back.query(Tag.self).average(\.count), Double(Int64.max - 1) / 6,
        magnitude: 4 * Double(Int64.max) / 6, "average of the same")
    },
    ConformanceCheck(
      "aggregate.sum-doubles",
      "Sums and averages of doubles are exact for exactly representable values and within the stated "
        + "tolerance otherwise; an average is the sum divided by the count."
    ) { context in
      let store = try await context.store(with: doubleCells([0.5, 1.25, nil, -0.75, 3]))
      try expectEqual(try await store.query(Cell.self).sum(\.double), 4.0, "sum")
      try expectEqual(try await store.query(Cell.self).average(\.double), 1.0, "average")
      let tenths = try await context.store(with: doubleCells((1...100).map { Double($0) / 10 }))
      let magnitude = (1...100).map { Double($0) / 10 }.reduce(0, +)
      try expectClose(
        try await tenths.query(Cell.self).sum(\.double), 505, magnitude: magnitude, "sum of tenths")
      try expectClose(
        try await tenths.query(Cell.self).average(\.double), 5.05, magnitude: magnitude / 100,
        "average of tenths")
      try expectEqual(
        try await store.query(Cell.self).filter(\.double < 1.0).sum(\.double), -0.25, "filtered")
    },
    ConformanceCheck(
      "aggregate.average-ints", "An average of integers is a Double, not rounded to an integer."
    ) { context in
      let store = try await context.store(with: countTags([1, 2, 2, -10, 8]))
      try expectEqual(try await store.query(Tag.self).average(\.count), 0.6, "average of 1, 2, 2, -10, 8")
      try expectEqual(try await store.query(Tag.self).filter(\.count > 0).average(\.count), 3.25, "positive")
    },
    ConformanceCheck(
      "aggregate.double-infinities",
      "A sum or average of doubles with +infinity is +infinity (with -infinity, -infinity); with both, "
        + "or finite values beyond Double's range, it is valueOutOfRange."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let error = try await expectThrows(.valueOutOfRange, "sum with both infinities") {
        try await store.query(Item.self).sum(\.score)
      }
      try expectMentions(error, ["Item", "score"], "the error")
      try await expectThrows(.valueOutOfRange, "average with both infinities") {
        try await store.query(Item.self).average(\.score)
      }
      try expectEqual(try await store.query(Item.self).filter(\.id != 7).sum(\.score), .infinity, "+infinity")
      try expectEqual(
        try await store.query(Item.self).filter(\.id != 5).average(\.score), -.infinity, "-infinity")
      let huge = try await context.store(
        with: doubleCells([.greatestFiniteMagnitude, .greatestFiniteMagnitude]))
      try await expectThrows(.valueOutOfRange, "finite values beyond Double's range") {
        try await huge.query(Cell.self).sum(\.double)
      }
      try await expectThrows(.valueOutOfRange, "their average") {
        try await huge.query(Cell.self).average(\.double)
      }
    },
    ConformanceCheck(
      "aggregate.infinity-beside-overflow",
      "An infinity among doubles whose finite values add up beyond Double's range is the sum and the "
        + "average ([max, max, -inf] gives -infinity, [-max, -max, +inf] +infinity), grouped or not."
    ) { context in
      let max = Double.greatestFiniteMagnitude
      let negative = try await context.store(with: doubleCells([max, max, -.infinity]))
      try expectEqual(
        try await negative.query(Cell.self).sum(\.double), -.infinity, "sum of [max, max, -inf]")
      try expectEqual(
        try await negative.query(Cell.self).average(\.double), -.infinity, "average of [max, max, -inf]")
      let positive = try await context.store(with: doubleCells([-max, -max, .infinity]))
      try expectEqual(
        try await positive.query(Cell.self).sum(\.double), .infinity, "sum of [-max, -max, +inf]")
      try expectEqual(
        try await positive.query(Cell.self).average(\.double), .infinity, "average of [-max, -max, +inf]")
      let cells: [(String, Double)] = [
        ("a", max), ("a", max), ("a", -.infinity), ("b", -max), ("b", -max), ("b", .infinity), ("c", 1.5),
        ("c", 2.5),
      ]
      let grouped = try await context.store(
        with: cells.enumerated().map {
          Cell(id: Int64($0.offset + 1), text: $0.element.0, double: $0.element.1)
        })
      let sums = try await grouped.query(Cell.self).group(by: \.text).sum(\.double)
      try expectEqual(sums.map(\.key), ["a", "b", "c"], "groups")
      try expectEqual(sums.map(\.value), [-.infinity, .infinity, 4], "grouped sums")
      let averages = try await grouped.query(Cell.self).group(by: \.text).average(\.double)
      try expectEqual(averages.map(\.value), [-.infinity, .infinity, 2], "grouped averages")
    },
    ConformanceCheck(
      "aggregate.row-api",
      "The row API aggregates by field name with the typed API's results; without grouping it gives one "
        + "group whose key is null."
    ) { context in
      let store = try await context.store(with: Item.sample)
      let sum = try await store.aggregateRows(
        Aggregation(entity: "Item", filter: FieldRef("flag") == true, .sum("rank")))
      try expectEqual(sum, [AggregateGroup(key: .null, value: .int(11))], "sum of flagged ranks")
      let empty = try await store.aggregateRows(
        Aggregation(entity: "Item", filter: FieldRef("id") > 100, .max("name")))
      try expectEqual(empty, [AggregateGroup(key: .null, value: .null)], "max over nothing")
      let counts = try await store.aggregateRows(Aggregation(entity: "Item", .count, groupedBy: "rank"))
      try expectEqual(
        counts.map(\.key), [.null, .int(1), .int(2), .int(3), .int(5)], "group keys, null first")
      try expectEqual(counts.map(\.value), [.int(2), .int(2), .int(1), .int(2), .int(1)], "group counts")
    },
  ]
}
