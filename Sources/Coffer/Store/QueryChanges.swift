/// How an observed query's result changed: what ``StoreQuery/observeChanges()`` yields.
///
/// The changes are given as ids, not indices: an id names a value whatever else moved around it.
/// Find a value's place in ``values`` (or in the previous result) where indices are needed.
///
/// - ``inserted``: the ids in the result now that were not in the previous one, in the order of
///   the result now. The first change set of a sequence lists every id of the first result.
/// - ``updated``: the ids in both results whose stored values differ, in the order of the result
///   now. A value written again unchanged is not listed.
/// - ``removed``: the ids in the previous result that are not in this one — deleted, or no
///   longer matching the filter or within the limit — in the order of the previous result.
///
/// A value that only moved (another value's change pushed it up or down) is in none of the
/// three lists; ``values`` has the new order.
public struct QueryChanges<T: Storable>: Sendable {
  /// The query's result now, in its order.
  public var values: [T]
  /// The ids that entered the result, in the order of ``values``.
  public var inserted: [T.ID]
  /// The ids whose values changed, in the order of ``values``.
  public var updated: [T.ID]
  /// The ids that left the result, in the order of the previous result.
  public var removed: [T.ID]

  /// A change set, as the observer computes it.
  init(values: [T], inserted: [T.ID], updated: [T.ID], removed: [T.ID]) {
    self.values = values
    self.inserted = inserted
    self.updated = updated
    self.removed = removed
  }

  /// Whether no id entered, changed or left (the result may still have moved).
  public var isEmpty: Bool { inserted.isEmpty && updated.isEmpty && removed.isEmpty }

  /// The changes between two results of a query, compared row by row.
  init(from previous: [Row], to rows: [Row], codec: RowCodec<T>) throws {
    let idPosition = codec.schema.idPosition
    var before: [Value: Row] = [:]
    before.reserveCapacity(previous.count)
    for row in previous { before[row[idPosition]] = row }
    values = try rows.map(codec.decode)
    inserted = []
    updated = []
    var present = Set<Value>()
    present.reserveCapacity(rows.count)
    for (row, value) in zip(rows, values) {
      let id = row[idPosition]
      present.insert(id)
      if let old = before[id] {
        if old != row { updated.append(value.id) }
      } else {
        inserted.append(value.id)
      }
    }
    removed = try previous.filter { !present.contains($0[idPosition]) }.map { try codec.decode($0).id }
  }
}

extension QueryChanges: Equatable where T: Equatable {}
