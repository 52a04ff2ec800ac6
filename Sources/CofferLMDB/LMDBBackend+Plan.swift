@_spi(Backend) import Coffer

extension LMDBBackend {
  /// How many rows, walked in key order and tested in place, cost about as much as one row
  /// looked up by id from an index entry: a lookup descends the rows' B-tree from its root,
  /// where a walk moves to the next entry of the page it is on.
  static let rowsPerLookup = 4

  /// The plan for a query in `transaction`: ``QueryPlan``'s choice of walk, weighed against a
  /// walk of every row when that choice is an index walk that must visit its whole range. The
  /// index walk looks each of its entries' rows up by id; the walk of every row reads each row
  /// once, in order. So the index wins while its range holds fewer than one row in
  /// ``rowsPerLookup``; the entries are counted up to that bound (a range of one key's
  /// duplicates is counted by liblmdb at once), never further.
  ///
  /// Only indexes the catalog still records are walked: another process may have dropped one
  /// since the handle was made (see ``walkable(_:in:)``).
  func plan(_ query: Query, handle: EntityHandle, in transaction: Transaction) throws -> QueryPlan {
    var plan = try QueryPlan(query, handle: handle)
    if case .index = plan.access {
      let walkable = try walkable(handle, in: transaction)
      if walkable !== handle { plan = try QueryPlan(query, handle: walkable) }
    }
    guard let (index, range) = plan.walksWholeIndexRange(limit: query.limit) else { return plan }
    let bound = try transaction.entryCount(handle.rows) / Self.rowsPerLookup
    let entries = try indexEntries(index, range, oneKey: plan.visitsOneKey, upTo: bound, in: transaction)
    return entries > bound ? plan.walkingEveryRow() : plan
  }
}
