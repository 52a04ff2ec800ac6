import Testing

@_spi(Backend) @testable import Coffer

/// `OrderedRows`, the B+tree behind the in-memory store's index orders, against a sorted array
/// through random inserts, replacements and removals, with snapshots taken along the way that
/// must keep what they saw.
@Suite struct OrderedRowsTests {
  /// Rows of (id, group, rank, payload), ordered by group, rank, then id.
  func row(_ id: Int, _ group: Int, _ rank: Int?, _ payload: Int = 0) -> Row {
    Row([.int(Int64(id)), .int(Int64(group)), rank.map { .int(Int64($0)) } ?? .null, .int(Int64(payload))])
  }

  func sorted(_ rows: [Int: Row], _ order: OrderedRows) -> [Row] {
    rows.values.sorted { order.compare($0, $1) < 0 }
  }

  func all(_ order: OrderedRows, in range: KeyRange = .all, reverse: Bool = false) -> [Row] {
    var rows: [Row] = []
    order.forEach(in: range, reverse: reverse) { row in
      rows.append(row)
      return true
    }
    return rows
  }

  /// The ranges checked at each step, with what each must hold.
  func ranges(_ numbers: inout SeededNumbers) -> [(KeyRange, (Row) -> Bool)] {
    let group = Int64(numbers.below(6))
    let low = Int64(numbers.below(40))
    let high = Int64(numbers.below(40))
    let inclusive = numbers.below(2) == 0
    func rank(_ row: Row) -> Int64? { if case .int(let r) = row[2] { r } else { nil } }
    return [
      (.all, { _ in true }),
      (.equal([.int(group)]), { $0[1] == .int(group) }),
      (
        KeyRange(
          lower: .init(values: [.int(group), .int(low)], inclusive: inclusive),
          upper: .init(values: [.int(group), .int(high)], inclusive: !inclusive)),
        { row in
          guard row[1] == .int(group), let r = rank(row) else { return false }
          return (inclusive ? r >= low : r > low) && (inclusive ? r < high : r <= high)
        }
      ),
      (
        KeyRange(
          lower: .init(values: [.int(group), .null], inclusive: false),
          upper: .init(values: [.int(group)], inclusive: true)),
        { $0[1] == .int(group) && rank($0) != nil }
      ),
      (
        KeyRange(lower: .init(values: [.int(group)], inclusive: false), upper: nil),
        { row in
          guard case .int(let g) = row[1] else { return false }
          return g > group
        }
      ),
    ]
  }

  @Test(arguments: [1, 2, 3])
  func randomChangesMatchASortedArrayAndSnapshotsKeepTheirRows(seed: Int) throws {
    var numbers = SeededNumbers(state: UInt64(seed))
    var order = OrderedRows(fields: [1, 2], idPosition: 0)
    var model: [Int: Row] = [:]
    var snapshots: [(OrderedRows, [Row])] = []
    for step in 0..<6_000 {
      let id = numbers.below(1_500)
      let rank = numbers.below(8) == 0 ? nil : numbers.below(40)
      let new = row(id, numbers.below(6), rank, step)
      switch (numbers.below(3), model[id]) {
      case (0, let old?):
        let changed = order.remove(numbers.below(2) == 0 ? old : Row(old.values.map { $0 }))
        #expect(changed)
        model[id] = nil
      case (1, let old?):
        // The same key with another payload, or a new key.
        if numbers.below(2) == 0 {
          var same = old
          same[3] = .int(Int64(step))
          // The row the tree holds, or an equal row in an array of its own: found by key.
          let held = numbers.below(2) == 0 ? old : Row(old.values.map { $0 })
          let changed = order.replace(held, with: same)
          #expect(changed)
          model[id] = same
        } else {
          let changed = order.remove(old)
          #expect(changed)
          order.insert(new)
          model[id] = new
        }
      case (_, nil):
        order.insert(new)
        model[id] = new
      default:
        break
      }
      if step % 500 == 0 { snapshots.append((order, sorted(model, order))) }
      if step % 97 == 0 {
        let expected = sorted(model, order)
        #expect(order.count == model.count)
        #expect(all(order) == expected)
        #expect(all(order, reverse: true) == expected.reversed())
        for (range, holds) in ranges(&numbers) {
          let inRange = expected.filter(holds)
          #expect(all(order, in: range) == inRange)
          #expect(all(order, in: range, reverse: true) == inRange.reversed())
          #expect(order.count(in: range) == inRange.count)
        }
      }
    }
    let removedAbsent = order.remove(row(5_000, 0, 0))
    #expect(!removedAbsent)
    for (snapshot, rows) in snapshots {
      #expect(all(snapshot) == rows)
      #expect(snapshot.count == rows.count)
    }
    // Emptied row by row, it still reads and counts as empty.
    for old in model.values {
      let removed = order.remove(old)
      #expect(removed)
    }
    #expect(order.count == 0)
    #expect(all(order).isEmpty)
  }

  @Test func sortedRowsLaidOutWholeReadAsInsertedOnes() {
    let rows = (0..<10_000).map { row($0, $0 % 7, $0 % 13) }
    let layout = OrderedRows(fields: [1, 2], idPosition: 0, sorted: [])
    let sortedRows = rows.sorted { layout.compare($0, $1) < 0 }
    var whole = OrderedRows(fields: [1, 2], idPosition: 0, sorted: sortedRows)
    #expect(all(whole) == sortedRows)
    #expect(whole.count(in: .equal([.int(3)])) == rows.count { $0[1] == .int(3) })
    whole.insert(row(20_000, 3, 5))
    let changed = whole.remove(sortedRows[4_000])
    #expect(changed)
    var expected = sortedRows
    expected.remove(at: 4_000)
    expected.append(row(20_000, 3, 5))
    expected.sort { layout.compare($0, $1) < 0 }
    #expect(all(whole) == expected)
  }

  @Test func aRangeWhoseBoundsCrossHoldsNothing() {
    let rows = (0..<5_000).map { row($0, 1, $0 % 100) }
    let layout = OrderedRows(fields: [1, 2], idPosition: 0)
    let order = OrderedRows(
      fields: [1, 2], idPosition: 0, sorted: rows.sorted { layout.compare($0, $1) < 0 })
    let crossed = KeyRange(
      lower: .init(values: [.int(1), .int(60)], inclusive: true),
      upper: .init(values: [.int(1), .int(20)], inclusive: true))
    #expect(all(order, in: crossed).isEmpty)
    #expect(all(order, in: crossed, reverse: true).isEmpty)
    #expect(order.count(in: crossed) == 0)
  }

  /// `sorted(_:)` and `merged(with:)`, which a large insert uses instead of a descent per row:
  /// rows with many ties and nulls merged into trees of several sizes, the empty one included,
  /// read and counted as the same rows inserted one by one.
  @Test(arguments: [0, 1, 63, 700])
  func rowsMergedInWholeReadAsInsertedOnes(stored: Int) {
    var numbers = SeededNumbers(state: UInt64(stored + 11))
    func made(_ ids: Range<Int>) -> [Row] {
      ids.map { row($0, numbers.below(4), numbers.below(5) == 0 ? nil : numbers.below(9)) }
    }
    var order = OrderedRows(fields: [1, 2], idPosition: 0)
    let first = made(0..<stored)
    for row in first { order.insert(row) }
    var added = made(stored..<stored + 2_000)
    for place in stride(from: added.count - 1, to: 0, by: -1) {
      added.swapAt(place, numbers.below(place + 1))
    }
    let sortedAdded = order.sorted(added)
    #expect(sortedAdded == added.sorted { order.compare($0, $1) < 0 })
    let snapshot = order
    let merged = order.merged(with: sortedAdded)
    var byRow = order
    for row in added { byRow.insert(row) }
    #expect(all(merged) == all(byRow))
    #expect(all(merged, reverse: true) == all(byRow).reversed())
    #expect(all(snapshot) == first.sorted { order.compare($0, $1) < 0 })
    for (range, _) in ranges(&numbers) + ranges(&numbers) {
      #expect(merged.count(in: range) == byRow.count(in: range))
      #expect(all(merged, in: range) == all(byRow, in: range))
    }
  }

  /// How the rows handed to `sorted(_:)` lie: each takes a different path through it.
  enum Arrival: CaseIterable, Sendable {
    /// Already in the order: handed back as they are.
    case inOrder
    /// Groups shuffled, but ranks rising with the ids, as dates rise with the ids of messages:
    /// each run of ties in the leading field is in order already.
    case tiesInOrder
    /// Everything shuffled, nulls among the ranks: each run of ties is sorted.
    case shuffled
    /// Exactly backwards.
    case reversed
  }

  /// `sorted(_:)` sorts by the leading field first and then each run of ties on its own, or
  /// hands rows already in order straight back: every way the rows can arrive must come out as
  /// a plain sort by the whole key puts them, in the order of the ids alone as well.
  @Test(arguments: Arrival.allCases)
  func sortedPutsRowsAsAWholeKeySortDoes(arrival: Arrival) {
    var numbers = SeededNumbers(state: 29)
    let byRank = OrderedRows(fields: [1, 2], idPosition: 0)
    let byID = OrderedRows(fields: [], idPosition: 0)
    var rows = (0..<3_000).map { id in
      row(id, numbers.below(7), arrival == .shuffled && numbers.below(6) == 0 ? nil : id / 3)
    }
    let expected = rows.sorted { byRank.compare($0, $1) < 0 }
    switch arrival {
    case .inOrder: rows = expected
    case .tiesInOrder: break
    case .shuffled:
      for place in stride(from: rows.count - 1, to: 0, by: -1) {
        rows.swapAt(place, numbers.below(place + 1))
      }
    case .reversed: rows = expected.reversed()
    }
    #expect(byRank.sorted(rows) == expected)
    #expect(byID.sorted(rows) == rows.sorted { byID.compare($0, $1) < 0 })
    // Leading values that are gathered by hash (the integers above), and those that are sorted
    // instead: strings, and more distinct integers than are gathered.
    let named = rows.map { row in
      var named = row
      named[1] = .string("group \(row[1])")
      return named
    }
    #expect(byRank.sorted(named) == named.sorted { byRank.compare($0, $1) < 0 })
    let spread = (0..<10_000).map { id in row(id, id * 7_919 % 5_000, 2 - id % 3) }
    #expect(byRank.sorted(spread) == spread.sorted { byRank.compare($0, $1) < 0 })
  }
}
