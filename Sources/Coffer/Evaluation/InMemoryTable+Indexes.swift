/// How an in-memory table reads a query through its index orders (``OrderedRows``): the
/// conditions of the filter that pin an index's leading fields, and bound the next, give a range
/// of the order that holds every row the filter matches. Read in order, that range yields a
/// sorted page by visiting little more than the page's rows; otherwise its rows are gathered and
/// sorted as a scan's would be, but only they.
extension InMemoryTable {
  /// A range (or several) of one index order that holds every row a filter matches.
  struct IndexPlan {
    /// Which of ``InMemoryTable/orders``.
    let order: Int
    /// Ranges in the order's order; several for an `isIn` on the field after those pinned.
    let ranges: [KeyRange]
    /// How many leading fields of the index equalities pin.
    let pinned: Int
    /// Whether every row in the ranges matches the filter: each of its conditions is one the
    /// ranges apply.
    let coversFilter: Bool
    /// The rows in the ranges.
    let rows: Int
    /// How many conditions of the filter the ranges leave to test.
    let untested: Int
  }

  /// How a plan's range is walked to read rows already in a query's order.
  struct IndexWalk {
    /// Backwards through the order.
    let reverse: Bool
    /// Whether the walk meets rows in exactly the query's order; otherwise rows that tie on the
    /// query's sort keys come in another order, and are sorted after the walk.
    let exact: Bool
  }

  /// The rows of a query found through the table's keyed structures: the map of a unique index
  /// whose fields equalities pin, or the order (of ids, or of an index) that visits the fewest
  /// rows. `nil` when none narrows or orders the query, which then tests every row.
  func plannedSlice(_ query: Query) throws -> [Row]? {
    let conditions = IndexConditions(query.filter, schema: schema)
    if let candidates = uniqueCandidates(conditions) {
      guard query.offset == 0, query.limit != 0 else { return [] }
      let compiled = try CompiledFilter(query.filter, schema: schema)
      return candidates.filter(compiled.matches)
    }
    return try indexedSlice(query, orders.indices.map { plan(order: $0, conditions) }, conditions)
  }

  /// The row (or none) a unique index's map holds for the values equalities pin all its fields
  /// to, or `nil` when no unique index is pinned so. Only values a map finds exactly as a
  /// filter compares them are looked up: booleans, integers, strings and UUIDs, each against a
  /// field of its own kind.
  func uniqueCandidates(_ conditions: IndexConditions) -> [Row]? {
    guard !conditions.equal.isEmpty else { return nil }
    for (index, positions) in uniquePositions.enumerated()
    where positions.allSatisfy({ position in
      conditions.equal[position].map { Self.isLookedUpExactly($0.value, schema.fields[position].kind) }
        ?? false
    }) {
      let key = positions.compactMap { conditions.equal[$0]?.value }
      return unique[index][key].flatMap { rows[$0] }.map { [$0] } ?? []
    }
    return nil
  }

  /// How many rows hold the value an equality gives the first field of an index, from
  /// ``InMemoryTable/leadingCounts``; `nil` when no index keeps counts for such an equality.
  private func leadingCount(_ conditions: IndexConditions) -> Int? {
    for (order, counts) in leadingCounts.enumerated() {
      let leading = orders[order].positions[0]
      guard let counts, let equal = conditions.equal[leading],
        Self.isLookedUpExactly(equal.value, schema.fields[leading].kind)
      else { continue }
      return counts[equal.value] ?? 0
    }
    return nil
  }

  private static func isLookedUpExactly(_ value: Value, _ kind: FieldKind) -> Bool {
    switch (value, kind) {
    case (.bool, .bool), (.int, .int), (.string, .string), (.uuid, .uuid): true
    default: false
    }
  }

  /// The plan whose ranges hold the fewest rows, or `nil` when no index narrows the filter.
  private static func narrowest(_ plans: [IndexPlan]) -> IndexPlan? {
    plans.filter { $0.pinned > 0 || $0.ranges != [.all] }.min { $0.rows < $1.rows }
  }

  /// The plan whose ranges hold the fewest rows for the conditions, or `nil` when no index
  /// narrows them.
  private func narrowestPlan(_ conditions: IndexConditions) -> IndexPlan? {
    Self.narrowest(orders.indices.map { plan(order: $0, conditions) })
  }

  /// Hands over every row of a plan's ranges, in the index's order.
  private func forEachRow(of plan: IndexPlan, _ body: (Row) -> Void) {
    for range in plan.ranges {
      orders[plan.order].forEach(in: range) { row in
        body(row)
        return true
      }
    }
  }

  /// The rows of `filter` that an index range holds (to be tested against the whole filter),
  /// or `nil` when no index narrows it.
  func candidates(for filter: Filter) -> [Row]? {
    let conditions = IndexConditions(filter, schema: schema)
    if let rows = uniqueCandidates(conditions) { return rows }
    guard let plan = narrowestPlan(conditions) else { return nil }
    var rows: [Row] = []
    rows.reserveCapacity(plan.rows)
    forEachRow(of: plan) { rows.append($0) }
    return rows
  }

  /// How many rows match `filter`, read through an index: counted in the index when its range
  /// covers the filter, tested row by row otherwise. `nil` when no index narrows the filter.
  func indexedCount(_ filter: Filter, _ compiled: CompiledFilter) -> Int? {
    let conditions = IndexConditions(filter, schema: schema)
    if let rows = uniqueCandidates(conditions) { return rows.count(where: compiled.matches) }
    if conditions.parts == 1, let count = leadingCount(conditions) { return count }
    guard let plan = narrowestPlan(conditions) else { return nil }
    if plan.coversFilter { return plan.rows }
    var count = 0
    forEachRow(of: plan) { if compiled.matches($0) { count += 1 } }
    return count
  }

  /// The rows of a query read through the index that visits the fewest rows: walked in order
  /// when the index sorts them as the query asks, gathered from its range and sorted otherwise.
  /// `nil` when no index narrows or orders the query.
  private func indexedSlice(_ query: Query, _ plans: [IndexPlan], _ conditions: IndexConditions) throws
    -> [Row]?
  {
    let ordering = try RowOrdering(query.sort, schema: schema)
    let (sum, overflow) = (query.limit ?? Int.max).addingReportingOverflow(query.offset)
    let wanted = overflow ? Int.max : sum
    var best: (plan: IndexPlan, walk: IndexWalk?, cost: Int)?
    for plan in plans {
      let walk = plan.ranges.count == 1 ? self.walk(plan, ordering, conditions) : nil
      guard walk != nil || plan.pinned > 0 || plan.ranges != [.all] else { continue }
      // A walk in order stops once the page is full: about the page's rows when the range
      // covers the filter, and (a guess) twice as many for each condition left to test.
      let (guess, over) = wanted.multipliedReportingOverflow(by: 1 << Swift.min(plan.untested, 20))
      let cost = walk == nil ? plan.rows : Swift.min(plan.rows, over ? Int.max : guess)
      if best.map({ cost < $0.cost }) ?? true { best = (plan, walk, cost) }
    }
    guard let best else { return nil }
    if query.limit == 0 { return [] }
    let compiled = try CompiledFilter(query.filter, schema: schema)
    let order = orders[best.plan.order]
    guard let walk = best.walk else {
      var matches: [Row] = []
      forEachRow(of: best.plan) { if compiled.matches($0) { matches.append($0) } }
      return ordering.orderedSlice(matches, offset: query.offset, limit: query.limit)
    }
    // The sort keys besides the id: rows equal on them tie in the walk.
    let tied = ordering.keys.map(\.position).filter { $0 != schema.idPosition }
    var kept: [Row] = []
    kept.reserveCapacity(Swift.min(wanted, best.plan.coversFilter ? best.plan.rows : 1024))
    order.forEach(in: best.plan.ranges[0], reverse: walk.reverse) { row in
      guard compiled.matches(row) else { return true }
      if let last = kept.last, kept.count >= wanted {
        // Rows that tie with the last kept one on the sort keys may still come before it.
        guard !walk.exact, tied.allSatisfy({ ValueOrder.compare(row[$0], last[$0]) == 0 }) else {
          return false
        }
      }
      kept.append(row)
      return true
    }
    if !walk.exact { kept.sort { ordering.compare($0, $1) < 0 } }
    if query.offset == 0, kept.count <= wanted { return kept }
    let start = Swift.min(query.offset, kept.count)
    return Array(kept[start..<Swift.max(start, Swift.min(kept.count, wanted))])
  }

  /// The range of one index order that the conditions narrow the filter to.
  private func plan(order: Int, _ conditions: IndexConditions) -> IndexPlan {
    let fields = orders[order].rangeFields
    guard let first = fields.first, conditions.constrains(first) else {
      // Every row: a plan only for a walk in the index's order.
      return IndexPlan(
        order: order, ranges: [.all], pinned: 0, coversFilter: conditions.parts == 0,
        rows: orders[order].count,
        untested: conditions.parts)
    }
    var prefix: [Value] = []
    // Each condition comes from a part of its own, so counting them counts the parts applied.
    var used = 0
    for field in fields {
      guard let equal = conditions.equal[field] else { break }
      prefix.append(equal.value)
      used += 1
    }
    var ranges = [prefix.isEmpty ? KeyRange.all : .equal(prefix)]
    if prefix.count < fields.count {
      let next = fields[fields.startIndex + prefix.count]
      let lower = conditions.lower[next]
      let upper = conditions.upper[next]
      if lower != nil || upper != nil {
        // A comparison never matches a null, and nulls come first: start past them.
        let start = lower.map { KeyRange.Bound(values: prefix + [$0.value], inclusive: $0.inclusive) }
        let end = upper.map { KeyRange.Bound(values: prefix + [$0.value], inclusive: $0.inclusive) }
        ranges = [
          KeyRange(
            lower: start ?? KeyRange.Bound(values: prefix + [.null], inclusive: false),
            upper: end ?? (prefix.isEmpty ? nil : KeyRange.Bound(values: prefix, inclusive: true)))
        ]
        used += (lower == nil ? 0 : 1) + (upper == nil ? 0 : 1)
      } else if let isIn = conditions.isIn[next] {
        var distinct: [Value] = []
        for value in isIn.values.sorted(by: { ValueOrder.compare($0, $1) < 0 })
        where distinct.last.map({ ValueOrder.compare($0, value) != 0 }) ?? true {
          distinct.append(value)
        }
        ranges = distinct.map { .equal(prefix + [$0]) }
        used += 1
      }
    }
    let rows = ranges == [.all] ? orders[order].count : ranges.reduce(0) { $0 + orders[order].count(in: $1) }
    return IndexPlan(
      order: order, ranges: ranges, pinned: prefix.count, coversFilter: used == conditions.parts,
      rows: rows, untested: conditions.parts - used)
  }

  /// How to walk a plan's range so that rows come in the query's order, or `nil` when its
  /// index does not sort them so: after the fields equalities pin (on which every match ties),
  /// the query's sort keys must be the index's next fields, all in one direction, with at most
  /// the id after them.
  private func walk(_ plan: IndexPlan, _ ordering: RowOrdering, _ conditions: IndexConditions) -> IndexWalk? {
    let fields = Array(orders[plan.order].indexFields)
    var keys = ordering.keys.filter { conditions.equal[$0.position] == nil }
    var idAscending = true
    if let last = keys.last, last.position == schema.idPosition {
      idAscending = last.ascending
      keys.removeLast()
    }
    guard keys.allSatisfy({ $0.position != schema.idPosition }),
      plan.pinned + keys.count <= fields.count,
      keys.map(\.position) == Array(fields[plan.pinned..<plan.pinned + keys.count])
    else { return nil }
    guard let first = keys.first else {
      // No key but the id: in id order only where every field of the index is pinned.
      return plan.pinned == fields.count ? IndexWalk(reverse: !idAscending, exact: true) : nil
    }
    guard keys.allSatisfy({ $0.ascending == first.ascending }) else { return nil }
    // The order breaks ties by the index's later fields, then by id ascending.
    let reverse = !first.ascending
    return IndexWalk(
      reverse: reverse, exact: plan.pinned + keys.count == fields.count && reverse != idAscending)
  }
}

/// The conditions of a filter's top-level conjunction that an index range can apply: an
/// equality, a lower and an upper bound, or an `isIn`, per field position, each with the part
/// of the conjunction it came from.
struct IndexConditions {
  var equal: [Int: (part: Int, value: Value)] = [:]
  var lower: [Int: (part: Int, value: Value, inclusive: Bool)] = [:]
  var upper: [Int: (part: Int, value: Value, inclusive: Bool)] = [:]
  var isIn: [Int: (part: Int, values: [Value])] = [:]
  /// The parts of the conjunction, besides those that match every row.
  var parts = 0

  init(_ filter: Filter, schema: EntitySchema) {
    var all: [Filter] = []
    Self.flatten(filter, into: &all)
    for part in all {
      guard case .compare(let field, let op, let value) = part else {
        if case .isIn(let field, let values) = part, !values.isEmpty, !values.contains(where: \.isNull),
          let position = schema.position(of: field), isIn[position] == nil,
          // Strings equal as Swift compares them (canonically) may differ in their bytes, and
          // an index orders bytes: only an `isIn` of other values finds all its rows there.
          ![.string, .document].contains(schema.fields[position].kind)
        {
          isIn[position] = (parts, values)
        }
        parts += 1
        continue
      }
      defer { parts += 1 }
      guard !value.isNull, let position = schema.position(of: field) else { continue }
      switch op {
      case .equal where equal[position] == nil: equal[position] = (parts, value)
      case .greater where lower[position] == nil, .greaterOrEqual where lower[position] == nil:
        lower[position] = (parts, value, op == .greaterOrEqual)
      case .less where upper[position] == nil, .lessOrEqual where upper[position] == nil:
        upper[position] = (parts, value, op == .lessOrEqual)
      default: break
      }
    }
  }

  /// Whether some condition applies to the field at `position`.
  func constrains(_ position: Int) -> Bool {
    equal[position] != nil || lower[position] != nil || upper[position] != nil || isIn[position] != nil
  }

  private static func flatten(_ filter: Filter, into parts: inout [Filter]) {
    switch filter {
    case .all: break
    case .and(let inner): for part in inner { flatten(part, into: &parts) }
    default: parts.append(filter)
    }
  }
}
