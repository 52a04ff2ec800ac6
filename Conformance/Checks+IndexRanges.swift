@_spi(Backend) import Coffer
import Foundation

/// The rows of the index-range check: an index on (`group`, `rank`), with few ranks so that
/// many rows tie, and some ranks null.
private let rangedSchema: EntitySchema = {
  do {
    return try EntitySchema(
      name: "Ranged",
      fields: [Field("id", .int), Field("group", .int), Field("rank", .int, isOptional: true)],
      idField: "id", indexes: [.on("group", "rank")])
  } catch {
    preconditionFailure("The check's schema is well formed: \(error)")
  }
}()

/// One row of the check's own model.
private struct RangedRow {
  var id: Int64
  var group: Int64
  var rank: Int64?

  var row: Row { Row([.int(id), .int(group), rank.map(Value.int) ?? .null]) }

  /// The value of a field of the model, by name.
  func value(_ field: String) -> Int64? {
    switch field {
    case "id": id
    case "group": group
    default: rank
    }
  }
}

/// A read of the check: conditions a store can answer from the index, a sort the index may or
/// may not serve, a slice.
private struct RangedRead {
  /// Each condition: a field, an operator and a value.
  var conditions: [(field: String, op: ComparisonOperator, value: Int64)]
  var sort: [(field: String, ascending: Bool)]
  var offset = 0
  var limit: Int?

  var query: Query {
    let parts = conditions.map { Filter.compare(field: $0.field, op: $0.op, value: .int($0.value)) }
    return Query(
      entity: "Ranged", filter: parts.isEmpty ? .all : .and(parts),
      sort: sort.map { Sort($0.field, ascending: $0.ascending) }, limit: limit, offset: offset)
  }

  func matches(_ row: RangedRow) -> Bool {
    conditions.allSatisfy { condition in
      guard let stored = row.value(condition.field) else { return false }
      switch condition.op {
      case .equal: return stored == condition.value
      case .notEqual: return stored != condition.value
      case .less: return stored < condition.value
      case .lessOrEqual: return stored <= condition.value
      case .greater: return stored > condition.value
      case .greaterOrEqual: return stored >= condition.value
      }
    }
  }

  /// The answer the suite's semantics give: nulls first ascending and last descending, then
  /// ties by id ascending unless the sort names the id.
  func expected(in rows: [RangedRow]) -> [Int64] {
    let sorted = rows.filter(matches).sorted { lhs, rhs in
      for key in sort {
        let (left, right) = (lhs.value(key.field), rhs.value(key.field))
        if left == right { continue }
        switch (left, right) {
        case (nil, _): return key.ascending
        case (_, nil): return !key.ascending
        case (let left?, let right?): return key.ascending ? left < right : left > right
        }
      }
      return lhs.id < rhs.id
    }
    let start = min(offset, sorted.count)
    let end = limit.map { min(sorted.count, start + $0) } ?? sorted.count
    return sorted[start..<end].map(\.id)
  }

  var described: String {
    let filter = conditions.map { "\($0.field) \($0.op.rawValue) \($0.value)" }.joined(separator: " && ")
    let order = sort.map { "\($0.field) \($0.ascending ? "ascending" : "descending")" }.joined(
      separator: ", ")
    return "filter [\(filter)], sort [\(order)], offset \(offset), limit \(limit.map(String.init) ?? "none")"
  }
}

/// Checks the reads of the index-range checks, each against `model` filtered and sorted by hand,
/// with its count: `label` says at which point of the check.
private func checkRangedReads(_ store: Store, _ model: [RangedRow], _ label: String) async throws {
  for group in Int64(0)...4 {
    let reads = [
      RangedRead(
        conditions: [("group", .equal, group), ("rank", .greater, 3), ("rank", .lessOrEqual, 9)],
        sort: [("rank", false)], offset: 2, limit: 10),
      RangedRead(
        conditions: [("group", .equal, group), ("rank", .less, 5)],
        sort: [("rank", true), ("id", false)],
        limit: 15),
      RangedRead(
        conditions: [("group", .equal, group), ("rank", .equal, 4)], sort: [], offset: 1, limit: 5),
      RangedRead(
        conditions: [("group", .equal, group), ("rank", .equal, 4)], sort: [("id", false)], limit: 6),
      RangedRead(
        conditions: [("group", .equal, group)], sort: [("rank", false), ("id", false)], limit: 25),
      RangedRead(
        conditions: [("group", .equal, group)], sort: [("rank", true)], offset: 40, limit: nil),
      RangedRead(
        conditions: [("group", .equal, group), ("rank", .greater, 100)], sort: [("rank", true)]),
      RangedRead(
        conditions: [("group", .equal, group), ("rank", .greaterOrEqual, 8), ("rank", .less, 3)],
        sort: [("rank", false)], limit: 5),
      RangedRead(conditions: [("group", .greaterOrEqual, group)], sort: [("group", true)], limit: 20),
      RangedRead(conditions: [], sort: [("group", false), ("rank", false)], offset: 7, limit: 30),
      RangedRead(
        conditions: [("rank", .greaterOrEqual, 10)], sort: [("group", true), ("rank", true)], limit: 12),
      RangedRead(conditions: [("id", .greater, group * 90)], sort: [], limit: 20),
      RangedRead(
        conditions: [("id", .lessOrEqual, 300 - group * 50), ("rank", .equal, 4)], sort: [("id", false)],
        offset: 1, limit: 10),
      RangedRead(conditions: [], sort: [], offset: Int(group) * 3, limit: nil),
    ]
    for read in reads {
      let ids = try await store.fetchRows(read.query).map { row -> Int64 in
        guard case .int(let id) = row[0] else {
          throw CheckFailure("a Ranged row came back without its id")
        }
        return id
      }
      try expectEqual(ids, read.expected(in: model), "\(label), \(read.described): ids")
      let counted = try await store.countRows(Query(entity: "Ranged", filter: read.query.filter))
      var all = read
      (all.offset, all.limit) = (0, nil)
      try expectEqual(
        counted, all.expected(in: model).count, "\(label), \(read.described): count")
    }
  }
}

extension ConformanceSuite {
  static let indexRangeChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "sort.index-ranges-with-ties",
      "Queries on a compound index — its first field pinned, its second bounded (or the bounds crossed), "
        + "sorted by its fields either way or not at all — and on ranges of ids give the rows and counts of the "
        + "same filter and sort over every row, with ties by id, as rows change between reads."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: [rangedSchema])
      var random = SplitMix64(seed: 0x12A_D6E5)
      func rank() -> Int64? { random.below(8) == 0 ? nil : Int64(random.below(12)) }
      var model = (1...400).map { id in RangedRow(id: Int64(id), group: Int64(random.below(4)), rank: rank())
      }
      try await store.apply(ChangeSet([.insertMany(entity: "Ranged", rows: RowSource(model.map(\.row)))]))

      try await checkRangedReads(store, model, "round 0")
      for round in 1...3 {
        var operations: [ChangeSet.Operation] = []
        for step in 0..<40 {
          let position = random.below(model.count)
          switch random.below(4) {
          case 0:
            model[position].rank = rank()
            operations.append(.update(entity: "Ranged", row: model[position].row))
          case 1:
            model[position].group = Int64(random.below(4))
            operations.append(.update(entity: "Ranged", row: model[position].row))
          case 2:
            operations.append(.delete(entity: "Ranged", id: .int(model[position].id)))
            model.remove(at: position)
          default:
            let row = RangedRow(
              id: 1_000 * Int64(round) + Int64(step), group: Int64(random.below(4)), rank: rank())
            model.append(row)
            operations.append(.insert(entity: "Ranged", row: row.row))
          }
        }
        try await store.apply(ChangeSet(operations))
        try await checkRangedReads(store, model, "round \(round)")
      }
    },
    ConformanceCheck(
      "batch.large-insert-all-or-nothing",
      "Batches inserting hundreds of rows at once into a smaller entity apply nothing when one of their rows "
        + "has a stored id or a later operation fails, and everything when they succeed: reads through the "
        + "entity's index and its ids, and their counts, give the rows stored after each."
    ) { context in
      let store = try await context.store()
      try await store.prepare(schemas: [rangedSchema])
      var random = SplitMix64(seed: 0xB_A7C4)
      func made(_ ids: ClosedRange<Int64>) -> [RangedRow] {
        ids.map { id in
          RangedRow(
            id: id, group: Int64(random.below(4)), rank: random.below(8) == 0 ? nil : Int64(random.below(12)))
        }
      }
      func insert(_ rows: [RangedRow]) -> ChangeSet.Operation {
        .insertMany(entity: "Ranged", rows: RowSource(rows.map(\.row)))
      }
      var model = made(1...100)
      try await store.apply(ChangeSet([insert(model)]))
      try await checkRangedReads(store, model, "after the first 100 rows")

      var clashing = made(101...400)
      clashing[200].id = 57
      try await expectThrows(.duplicateID, "inserting 300 rows, one with a stored id") {
        try await store.apply(ChangeSet([insert(clashing)]))
      }
      try await checkRangedReads(store, model, "after the insert with a stored id")

      try await expectThrows(.notFound, "inserting 300 rows, then updating a missing row") {
        try await store.apply(
          ChangeSet([
            .delete(entity: "Ranged", id: .int(3)), insert(made(101...400)),
            .update(entity: "Ranged", row: RangedRow(id: 9_999, group: 1, rank: 1).row),
          ]))
      }
      try await checkRangedReads(store, model, "after the batch whose update failed")

      let added = made(101...400)
      model.remove(at: 2)
      model[10].rank = 11
      var changed = added
      changed[5].group = 3
      model += changed
      try await store.apply(
        ChangeSet([
          .delete(entity: "Ranged", id: .int(3)), insert(added),
          .update(entity: "Ranged", row: model[10].row), .update(entity: "Ranged", row: changed[5].row),
        ]))
      try await checkRangedReads(store, model, "after the batch that succeeded")
    },
  ]
}
