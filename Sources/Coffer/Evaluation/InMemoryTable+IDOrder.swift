extension InMemoryTable {
  /// Forgets the id order: called when ``rows`` gains an id. Replacing a row keeps the order,
  /// and so does removing one (see ``idRemoved()``): a walk skips the ids it finds no row for.
  mutating func rowsChanged() { KeptValue.forget(&idOrder) }

  /// Forgets the rows of the last full read: called at every change of a row.
  mutating func scanChanged() { KeptValue.forget(&scanOrder) }

  /// Called when ``rows`` loses an id. The order, when known, holds every id of this table and
  /// of the copies that share it. An order not yet known and shared with a copy is left to the
  /// copy: this table could otherwise make it without ids the copy still has.
  mutating func idRemoved() {
    if !isKnownUniquelyReferenced(&idOrder), !idOrder.isFilled { idOrder = KeptValue() }
  }

  /// The rows of a query ordered by id alone (no sort keys, or only the id's), found by walking
  /// the ids in order until the slice is full — instead of sorting every matching row for each
  /// read — or `nil` for any other query, and for one whose filter an index range narrows to
  /// so few rows that sorting them costs less than the walk would (a unique key, say). A keyset
  /// page (`id > last`) starts its walk with a binary search. `narrowed` is how many rows the
  /// narrowest index range for the filter holds, if one does.
  func idOrderedSlice(_ query: Query, narrowed: Int?) throws -> [Row]? {
    let idField = schema.idField.name
    guard query.sort.allSatisfy({ $0.field == idField }) else { return nil }
    let ascending = query.sort.first?.ascending ?? true
    guard query.sort.allSatisfy({ $0.ascending == ascending }) else { return nil }
    let limit = query.limit ?? Int.max
    if let narrowed {
      // The walk visits about (offset + limit) × rows / matches rows, and at most every row.
      let (wanted, over) = limit.addingReportingOverflow(query.offset)
      let (visits, overflow) = wanted.multipliedReportingOverflow(by: rows.count)
      let walked = over || overflow ? rows.count : Swift.min(rows.count, visits / Swift.max(narrowed, 1))
      if 2 * narrowed < walked { return nil }
    }
    // A read of every row (a scan) hands over the rows the last one gathered, while no row
    // has changed since.
    if ascending, case .all = query.filter, query.limit == nil, query.offset == 0 {
      return try scanOrder.value { try rowsInIDOrder(query) }
    }
    return try walk(query, ascending: ascending)
  }

  /// The rows of ``idOrderedSlice(_:)``, found by the walk.
  private func walk(_ query: Query, ascending: Bool) throws -> [Row] {
    let idField = schema.idField.name
    let limit = query.limit ?? Int.max
    let ids = idOrder.value { Self.sorted(rows.keys) }
    let compiled = try CompiledFilter(query.filter, schema: schema)
    var position = ascending ? 0 : ids.count - 1
    if ascending, case .compare(idField, let op, let bound) = query.filter,
      op == .greater || op == .greaterOrEqual,
      !bound.isNull
    {
      position = Self.firstPosition(in: ids, after: bound, inclusive: op == .greaterOrEqual)
    }
    var slice: [Row] = []
    slice.reserveCapacity(Swift.min(limit, 1024))
    var skipped = 0
    while ids.indices.contains(position), slice.count < limit {
      defer { position += ascending ? 1 : -1 }
      guard let row = rows[ids[position]], compiled.matches(row) else { continue }
      if skipped < query.offset {
        skipped += 1
      } else {
        slice.append(row)
      }
    }
    return slice
  }

  /// Every row of `scan` (a query of every row in id order), sorted with its id rather than
  /// found by it when the ids are integers: a walk would look up each id, a cache miss per row
  /// in a large table. Other ids compare as values, several times slower than integers, so a
  /// kept id order is walked instead of sorting them again. Keeps the id order too, when not
  /// known yet.
  private func rowsInIDOrder(_ scan: Query) throws -> [Row] {
    var integers: [(id: Int64, row: Row)] = []
    integers.reserveCapacity(rows.count)
    for (id, row) in rows {
      guard case .int(let number) = id else {
        if idOrder.isFilled { return try walk(scan, ascending: true) }
        let sorted = rows.sorted { ValueOrder.compare($0.key, $1.key) < 0 }
        if !idOrder.isFilled { _ = idOrder.value { sorted.map(\.key) } }
        return sorted.map(\.value)
      }
      integers.append((number, row))
    }
    integers.sort { $0.id < $1.id }
    if !idOrder.isFilled { _ = idOrder.value { integers.map { .int($0.id) } } }
    return integers.map(\.row)
  }

  /// Ids in ascending order; integer ids, the usual kind, are sorted as integers, several times
  /// faster than comparing them as values.
  static func sorted(_ ids: some Collection<Value>) -> [Value] {
    var integers: [Int64] = []
    integers.reserveCapacity(ids.count)
    for id in ids {
      guard case .int(let number) = id else { return ids.sorted { ValueOrder.compare($0, $1) < 0 } }
      integers.append(number)
    }
    integers.sort()
    return integers.map { .int($0) }
  }

  /// The position of the first id above `bound` (or equal to it, when `inclusive`).
  private static func firstPosition(in ids: [Value], after bound: Value, inclusive: Bool) -> Int {
    var low = 0
    var high = ids.count
    while low < high {
      let middle = (low + high) / 2
      let order = ValueOrder.compare(ids[middle], bound)
      if order < 0 || (order == 0 && !inclusive) { low = middle + 1 } else { high = middle }
    }
    return low
  }
}
