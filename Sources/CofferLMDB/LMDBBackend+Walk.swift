import CLMDB
@_spi(Backend) import Coffer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

extension LMDBBackend {
  /// The rows of a query whose plan does not read in its order: every match, sorted, then sliced.
  func sortedRows(_ query: Query, plan: QueryPlan, handle: EntityHandle, in pinned: Transaction?) throws
    -> [Row]
  {
    if let limit = query.limit, limit <= 0 { return [] }
    return try environment.read(in: pinned) { transaction in
      try sortedRows(query, plan: plan, handle: handle, in: transaction)
    }
  }

  /// The rows a query selects in `transaction`, in its order and slice and in its layout: what
  /// a batch's precondition or update by query reads inside the write transaction.
  func rows(of query: Query, handle: EntityHandle, in transaction: Transaction) throws -> [Row] {
    var rows: [Row] = []
    if let ids = query.lookedUpIDs(in: handle.schema) {
      for id in ids {
        try KeyEncoding.withIDKey(id) { key in
          if let bytes = try transaction.get(handle.rows, key) {
            rows.append(Row(try decode(bytes, key: key, handle: handle, in: transaction)))
          }
        }
      }
    } else {
      let plan = try plan(query, handle: handle, in: transaction)
      rows = try sortedRows(query, plan: plan, handle: handle, in: transaction)
    }
    let reshape = try RowReshaper(reading: handle.schema, as: query.layout, store: name)
    return reshape.isIdentity ? rows : rows.map { reshape($0) }
  }

  /// Every match of a plan in `transaction`, sorted, then sliced. A small slice (a limit, and an
  /// offset, of at most ``Coffer/RowOrdering/selectionLimit`` rows together) decodes only the
  /// rows it keeps: see ``firstRows(_:of:ordering:handle:in:)``.
  func sortedRows(_ query: Query, plan: QueryPlan, handle: EntityHandle, in transaction: Transaction) throws
    -> [Row]
  {
    let ordering = try RowOrdering(query.sort, schema: handle.schema)
    let offset = max(0, query.offset)
    if let limit = query.limit, limit <= RowOrdering.selectionLimit,
      offset <= RowOrdering.selectionLimit - limit
    {
      let rows = try firstRows(offset + limit, of: plan, ordering: ordering, handle: handle, in: transaction)
      return Array(rows.dropFirst(offset))
    }
    var rows: [Row] = []
    try scan(plan, handle: handle, in: transaction) { _, values in
      rows.append(Row(values))
      return true
    }
    return ordering.orderedSlice(rows, offset: offset, limit: query.limit)
  }

  /// The first `count` matches of a plan in `ordering`. Each row the walk offers is tested and
  /// has its sort fields and id read in place; only the rows that stay among the first are
  /// decoded, at the end, from their bytes in the memory map (valid for the transaction). A row
  /// of another layout is decoded when offered, as it cannot be read in place.
  private func firstRows(
    _ count: Int, of plan: QueryPlan, ordering: RowOrdering, handle: EntityHandle, in transaction: Transaction
  ) throws -> [Row] {
    enum Source {
      /// A row read in place: its id key (copied, as an `.ids` walk's key does not outlive the
      /// offer) and its bytes.
      case stored(key: [UInt8], bytes: UnsafeRawBufferPointer)
      /// A row decoded when offered: the kept row is the whole row.
      case decoded
    }
    var selection = FirstRows<Source>(count, in: ordering)
    let positions = ordering.positions
    var order = Row(Array(repeating: .null, count: handle.schema.fields.count))
    try LMDBFields.with(handle, backend: self) { fields in
      var probe = FilterProbe(plan: plan, handle: handle)
      try walk(plan, handle: handle, in: transaction) { key, bytes in
        if try probe.rejects(bytes, key: key, backend: self) { return true }
        if try load(bytes, key: key, into: fields) {
          // The probe tested the row, or the walk vouches for it.
          for position in positions { order[position] = try fields.value(at: position) }
          if selection.admits(order) { selection.keep(order, .stored(key: Array(key), bytes: bytes)) }
        } else {
          let row = Row(try decode(bytes, key: key, handle: handle, in: transaction))
          guard plan.walkMatchesFilter || plan.filter.matches(row) else { return true }
          if selection.admits(row) { selection.keep(row, .decoded) }
        }
        return true
      }
    }
    return try selection.kept.map { row, source in
      switch source {
      case .decoded: return row
      case .stored(let key, let bytes):
        return Row(try key.withUnsafeBytes { try decode(bytes, key: $0, handle: handle, in: transaction) })
      }
    }
  }

  /// Loads a row into `fields` to be read in place; `false` for a row of another layout, which
  /// must be decoded instead.
  private func load(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, into fields: LMDBFields)
    throws -> Bool
  {
    do {
      try fields.load(bytes, key: key)
      return true
    } catch .otherLayout {
      return false
    } catch {
      throw damage(error, key: key, schema: fields.schema)
    }
  }

  /// The number of rows the query's filter selects; a query with no filter reads only the
  /// entity's entry count, a walk that alone decides which rows match counts entries without
  /// reading a row, and any other walk tests rows in place without decoding them.
  @_spi(Backend) public func count(_ query: Query) async throws -> Int {
    try count(query, in: nil)
  }

  /// ``count(_:)`` in `pinned` (a snapshot's transaction), or in a read transaction of its own
  /// when it is `nil`.
  func count(_ query: Query, in pinned: Transaction?) throws -> Int {
    let handle = try handle(query.entity)
    return try environment.read(in: pinned) { transaction in
      var counting = try QueryPlan(query, handle: handle)
      if counting.matchesAll { return try transaction.entryCount(handle.rows) }
      if case .index = counting.access {
        let walkable = try walkable(handle, in: transaction)
        if walkable !== handle { counting = try QueryPlan(query, handle: walkable) }
      }
      if counting.walkMatchesFilter {
        return try countWalked(counting, handle: handle, in: transaction)
      }
      // Rows must be read: the walk is weighed against one of every row, and each row is
      // tested in place, decoded only when it is of another layout.
      let plan = try plan(query, handle: handle, in: transaction)
      var count = 0
      var probe = FilterProbe(plan: plan, handle: handle)
      try walk(plan, handle: handle, in: transaction) { key, bytes in
        if try probe.rejects(bytes, key: key, backend: self) { return true }
        if !probe.tested && !plan.walkMatchesFilter {
          let row = Row(try decode(bytes, key: key, handle: handle, in: transaction))
          guard plan.filter.matches(row) else { return true }
        }
        count += 1
        return true
      }
      return count
    }
  }

  /// Walks a plan and calls `visit` with the id key and values of each row the filter matches,
  /// in walk order, until `visit` returns `false`.
  func scan(
    _ plan: QueryPlan, handle: EntityHandle, in transaction: Transaction,
    visit: (UnsafeRawBufferPointer, [Value]) throws -> Bool
  ) throws {
    var probe = FilterProbe(plan: plan, handle: handle)
    try walk(plan, handle: handle, in: transaction) { key, bytes in
      if try probe.rejects(bytes, key: key, backend: self) { return true }
      let values = try decode(bytes, key: key, handle: handle, in: transaction)
      guard plan.walkMatchesFilter || probe.tested || plan.filter.matches(Row(values)) else { return true }
      return try visit(key, values)
    }
  }

  /// Walks a plan and calls `offer` with the id key and stored bytes of each row it reaches, in
  /// walk order, until `offer` returns `false`; the filter is not checked.
  func walk(
    _ plan: QueryPlan, handle: EntityHandle, in transaction: Transaction,
    offer: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    switch plan.access {
    case .ids(let keys):
      for key in keys {
        let more = try key.withUnsafeBytes { key in
          guard let bytes = try transaction.get(handle.rows, key) else { return true }
          return try offer(key, bytes)
        }
        if !more { return }
      }
    case .rows(let range):
      try transaction.withCursor(handle.rows) { cursor in
        try walk(&cursor, range, sortedDuplicates: false) { key, bytes in try offer(key, bytes) }
      }
    case .index(let index, let range):
      try transaction.withCursor(index.database) { cursor in
        try walk(&cursor, range, sortedDuplicates: true) { _, idKey in
          guard let bytes = try transaction.get(handle.rows, idKey) else {
            throw CofferError(
              .corruptStore,
              "An entry of the \(handle.schema.name) index on \(index.index.fields.joined(separator: ", ")) names a "
                + "row that is not stored. Restore the store from a backup.",
              store: name, entity: handle.schema.name, path: path)
          }
          return try offer(idKey, bytes)
        }
      }
    }
  }

  /// The number of entries a plan's walk visits, counted without reading or decoding a row:
  /// right when the walk alone decides which rows match (``QueryPlan/walkMatchesFilter``). An
  /// index walk counts index entries and never looks a row up; a walk of one key's duplicates
  /// asks liblmdb for their number.
  private func countWalked(_ plan: QueryPlan, handle: EntityHandle, in transaction: Transaction) throws -> Int
  {
    var count = 0
    func counted(_: UnsafeRawBufferPointer, _: UnsafeRawBufferPointer) -> Bool {
      count += 1
      return true
    }
    switch plan.access {
    case .ids(let keys):
      for key in keys {
        if try key.withUnsafeBytes({ try transaction.get(handle.rows, $0) }) != nil { count += 1 }
      }
    case .rows(var range):
      range.descending = false  // Order does not change a count.
      try transaction.withCursor(handle.rows) { cursor in
        try walk(&cursor, range, sortedDuplicates: false, visit: counted)
      }
    case .index(let index, let range):
      count = try indexEntries(index, range, oneKey: plan.visitsOneKey, in: transaction)
    }
    return count
  }

  /// The number of an index's entries in a range, counted up to one past `bound` at most, which
  /// is enough to tell that the range holds more: one `mdb_cursor_count` when the range is one
  /// key's duplicates (`oneKey`), otherwise a walk of the entries.
  func indexEntries(
    _ index: IndexHandle, _ range: QueryPlan.KeyRange, oneKey: Bool, upTo bound: Int = .max,
    in transaction: Transaction
  ) throws -> Int {
    try transaction.withCursor(index.database) { cursor in
      if oneKey, let key = range.lower {
        return try cursor.seek(key, MDB_SET_KEY) ? cursor.duplicateCount() : 0
      }
      var forward = range
      forward.descending = false  // Order does not change a count.
      var count = 0
      try walk(&cursor, forward, sortedDuplicates: false) { _, _ in
        count += 1
        return count <= bound
      }
      return count
    }
  }

  /// Visits the entries of a key range in key order (or backwards), with the duplicates of one
  /// key always in ascending order, so that ties stay ordered by id either way.
  private func walk(
    _ cursor: inout Cursor, _ range: QueryPlan.KeyRange, sortedDuplicates: Bool,
    visit: (UnsafeRawBufferPointer, UnsafeRawBufferPointer) throws -> Bool
  ) throws {
    if !range.descending {
      var found = try range.lower.map { try cursor.seek($0) } ?? cursor.move(MDB_FIRST)
      while found {
        if let upper = range.upper, compare(cursor.key, upper) >= 0 { return }
        guard try visit(cursor.key, cursor.data) else { return }
        found = try cursor.move(MDB_NEXT)
      }
      return
    }
    var found: Bool
    if let upper = range.upper {
      found = try cursor.seek(upper) ? cursor.move(MDB_PREV) : cursor.move(MDB_LAST)
    } else {
      found = try cursor.move(MDB_LAST)
    }
    while found {
      if let lower = range.lower, compare(cursor.key, lower) < 0 { return }
      if sortedDuplicates, try cursor.duplicateCount() > 1 {
        // Re-seek the key rather than MDB_FIRST_DUP: after MDB_LAST, liblmdb's cursor is
        // flagged at its end and MDB_NEXT_DUP would stop at once.
        guard try cursor.seek(Array(cursor.key), MDB_SET_KEY) else { return }
        repeat {
          guard try visit(cursor.key, cursor.data) else { return }
        } while try cursor.move(MDB_NEXT_DUP)
        found = try cursor.move(MDB_PREV_NODUP)
      } else {
        guard try visit(cursor.key, cursor.data) else { return }
        found = try cursor.move(MDB_PREV)
      }
    }
  }

  /// Byte-wise comparison, shorter first on a common prefix: liblmdb's key order.
  private func compare(_ key: UnsafeRawBufferPointer, _ bound: [UInt8]) -> Int {
    bound.withUnsafeBytes { bound in
      let common = min(key.count, bound.count)
      if common > 0, let a = key.baseAddress, let b = bound.baseAddress {
        let order = memcmp(a, b, common)
        if order != 0 { return order < 0 ? -1 : 1 }
      }
      return key.count == bound.count ? 0 : (key.count < bound.count ? -1 : 1)
    }
  }
}

/// Tests a row on the fields its plan's filter reads, decoded in place from the stored bytes,
/// so that a row the filter rejects is never decoded whole: a scan that keeps one row in twenty
/// decodes one in twenty. One per walk.
struct FilterProbe {
  let plan: QueryPlan
  let handle: EntityHandle
  /// The values the filter reads, at their positions; null elsewhere (the filter reads no other).
  private var values: [Value]
  /// Whether the last row offered was tested here (and kept); `false` when it must be tested
  /// after decoding: a row of another layout, or a plan whose walk vouches for its rows.
  private(set) var tested = false

  init(plan: QueryPlan, handle: EntityHandle) {
    self.plan = plan
    self.handle = handle
    values = plan.walkMatchesFilter ? [] : Array(repeating: .null, count: handle.schema.fields.count)
  }

  /// Whether the filter rejects the row at `bytes`.
  mutating func rejects(_ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, backend: LMDBBackend)
    throws -> Bool
  {
    tested = false
    guard !plan.walkMatchesFilter else { return false }
    let schema = handle.schema
    let count = schema.fields.count
    do {
      try withUnsafeTemporaryAllocation(of: RowCodec.Slot.self, capacity: count) { slots throws(RowDamage) in
        try handle.shape.slots(bytes, into: slots)
        for position in plan.filterPositions {
          values[position] = try RowCodec.value(slots[position], in: bytes, field: position, of: schema)
        }
      }
    } catch .otherLayout {
      return false
    } catch {
      throw backend.damage(error, key: key, schema: schema)
    }
    tested = true
    return !plan.filter.matches(Row(values))
  }
}
