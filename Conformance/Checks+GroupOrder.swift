@_spi(Backend) import Coffer
import Foundation

/// The rows of the group-order check: `group` leads an index, so an equality on it picks out
/// one group of about a hundred rows, which the reads sort by `rank` (with nulls and ties) and
/// `label`.
private let groupedSchema: EntitySchema = {
  do {
    return try EntitySchema(
      name: "Grouped",
      fields: [
        Field("id", .int), Field("group", .int), Field("rank", .int, isOptional: true),
        Field("label", .string),
      ],
      idField: "id", indexes: [.on("group", "rank")])
  } catch {
    preconditionFailure("The check's schema is well formed: \(error)")
  }
}()

/// One row of the check's own model, from which it works out every answer.
private struct GroupedRow: Equatable {
  var id: Int64
  var group: Int64
  var rank: Int64?
  var label: String

  var row: Row { Row([.int(id), .int(group), rank.map(Value.int) ?? .null, .string(label)]) }

  init(id: Int64, group: Int64, rank: Int64?, label: String) {
    (self.id, self.group, self.rank, self.label) = (id, group, rank, label)
  }

  init(_ row: Row) throws {
    guard case .int(let id) = row[0], case .int(let group) = row[1], case .string(let label) = row[3] else {
      throw CheckFailure("a Grouped row came back with values of other kinds")
    }
    var rank: Int64?
    if case .int(let stored) = row[2] { rank = stored }
    self.init(id: id, group: group, rank: rank, label: label)
  }
}

/// A read of the check: one group, perhaps a further condition, a sort, a slice.
private struct GroupRead {
  var group: Int64
  var labelPrefix: String?
  var rankAscending: Bool
  var byLabel: Bool
  var offset: Int
  var limit: Int?

  var query: Query {
    var filter = Filter.compare(field: "group", op: .equal, value: .int(group))
    if let labelPrefix {
      filter = .and([filter, .string(field: "label", match: .hasPrefix, pattern: labelPrefix)])
    }
    var sort = [Sort("rank", ascending: rankAscending)]
    if byLabel { sort.append(Sort("label")) }
    return Query(entity: "Grouped", filter: filter, sort: sort, limit: limit, offset: offset)
  }

  /// The answer the suite's semantics give: nulls first ascending and last descending, ties by
  /// label when asked, then by id ascending.
  func expected(in rows: [GroupedRow]) -> [Int64] {
    let matching = rows.filter { row in
      row.group == group && (labelPrefix.map { row.label.utf8.starts(with: $0.utf8) } ?? true)
    }
    let sorted = matching.sorted { lhs, rhs in
      if lhs.rank != rhs.rank {
        switch (lhs.rank, rhs.rank) {
        case (nil, _): return rankAscending
        case (_, nil): return !rankAscending
        case (let left?, let right?): return rankAscending ? left < right : left > right
        }
      }
      if byLabel, lhs.label != rhs.label { return lhs.label.utf8.lexicographicallyPrecedes(rhs.label.utf8) }
      return lhs.id < rhs.id
    }
    let start = min(offset, sorted.count)
    let end = limit.map { min(sorted.count, start + $0) } ?? sorted.count
    return sorted[start..<end].map(\.id)
  }

  var described: String {
    "group \(group)\(labelPrefix.map { " with label prefix \($0)" } ?? ""), rank "
      + (rankAscending ? "ascending" : "descending") + (byLabel ? " then label" : "")
      + ", offset \(offset), limit \(limit.map(String.init) ?? "none")"
  }
}

extension ConformanceSuite {
  static let groupOrderChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "sort.within-large-groups-after-changes",
      "Sorted pages of rows that one indexed value picks out (about a hundred each) stay right as "
        + "rows of the group are inserted, re-ranked, moved to another group and deleted between reads."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: [groupedSchema])
      var random = SplitMix64(seed: 0x6E0_0DE5)
      var model: [GroupedRow] = (1...330).map { id in
        GroupedRow(
          id: Int64(id), group: Int64(id % 3), rank: random.below(9) == 0 ? nil : Int64(random.below(40)),
          label: ["a", "b", "ab", "B", ""][random.below(5)])
      }
      try await store.apply(
        ChangeSet([.insertMany(entity: "Grouped", rows: RowSource(model.map(\.row)))]))

      func checkReads(_ round: Int) async throws {
        for group in Int64(0)...3 {
          for read in [
            GroupRead(
              group: group, labelPrefix: nil, rankAscending: true, byLabel: false, offset: 0, limit: 20),
            GroupRead(
              group: group, labelPrefix: nil, rankAscending: false, byLabel: true, offset: 15, limit: 10),
            GroupRead(
              group: group, labelPrefix: "a", rankAscending: false, byLabel: false, offset: 3, limit: 7),
            GroupRead(
              group: group, labelPrefix: nil, rankAscending: true, byLabel: true, offset: 0, limit: nil),
          ] {
            // Twice: a store may keep what the first read worked out for the second.
            for time in ["first", "second"] {
              let ids = try await store.fetchRows(read.query).map { try GroupedRow($0).id }
              try expectEqual(
                ids, read.expected(in: model), "round \(round), \(read.described), \(time) read: ids")
            }
          }
        }
      }

      try await checkReads(0)
      // Rounds 1–4 make one kind of change each (a round of re-ranks alone leaves every group
      // with the same rows), rounds 5–8 all kinds at once.
      for round in 1...8 {
        var operations: [ChangeSet.Operation] = []
        for _ in 0..<12 {
          let position = random.below(model.count)
          switch round <= 4 ? round - 1 : random.below(4) {
          case 0:
            model[position].rank = random.below(5) == 0 ? nil : Int64(random.below(40))
            operations.append(.update(entity: "Grouped", row: model[position].row))
          case 1:
            model[position].group = Int64(random.below(4))
            operations.append(.update(entity: "Grouped", row: model[position].row))
          case 2:
            operations.append(.delete(entity: "Grouped", id: .int(model[position].id)))
            model.remove(at: position)
          default:
            let row = GroupedRow(
              id: 1_000 * Int64(round) + Int64(operations.count), group: Int64(random.below(4)),
              rank: Int64(random.below(40)), label: "ab")
            model.append(row)
            operations.append(.insert(entity: "Grouped", row: row.row))
          }
        }
        try await store.apply(ChangeSet(operations))
        try await checkReads(round)
      }
    }
  ]
}
