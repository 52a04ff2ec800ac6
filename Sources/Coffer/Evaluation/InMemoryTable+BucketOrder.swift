import Synchronization

/// The rows of one lookup bucket (the rows holding one value of a looked-up field) in the
/// order of a query's sort, sorted by the second read that asks for that order and kept until
/// a row of the bucket changes — so that a thread's page of messages, read again and again,
/// reads the page's rows instead of selecting them among every row of the thread.
///
/// A table is a value (a copy is a snapshot), so the orders live in a box that copies share
/// while their buckets are alike: a table that changes a row of the bucket gets a box of its own
/// (or empties its box when no copy shares it), and a snapshot keeps the box that matches its
/// rows.
final class BucketOrder: Sendable {
  private struct State {
    /// The bucket's rows in each order kept, by ``key(_:)``.
    var orders: [[Int]: [Row]] = [:]
    /// The bucket's rows as the first read gathered them, in no order.
    var gathered: [Row]?
  }

  /// The bucket's rows for a read.
  enum Rows {
    /// In the order asked for.
    case sorted([Row])
    /// In no order: the first read of the bucket, which selects the few rows it wants itself
    /// rather than sort them all (a bucket read once before it changes is not sorted for
    /// nothing); the next read sorts these.
    case gathered([Row])
  }

  /// Whether anything is kept, so that emptying an empty box costs no lock.
  private let filled = Atomic<Bool>(false)
  private let state = LockedState(State())

  /// The rows in the order of `ordering` as kept, or the kept rows of an earlier read sorted
  /// and kept, or — at the first read — the rows `gather` makes, kept in no order.
  func rows(in ordering: RowOrdering, gather: () -> [Row]) -> Rows {
    let key = Self.key(ordering)
    let (sorted, gathered) = state.withLock { ($0.orders[key], $0.gathered) }
    if let sorted { return .sorted(sorted) }
    guard var rows = gathered else {
      let rows = gather()
      state.withLock { $0.gathered = rows }
      filled.store(true, ordering: .releasing)
      return .gathered(rows)
    }
    rows.sort { ordering.compare($0, $1) < 0 }
    state.withLock { $0.orders[key] = rows }
    return .sorted(rows)
  }

  /// Forgets every order.
  func clear() {
    guard filled.load(ordering: .acquiring) else { return }
    state.withLock { $0 = State() }
    filled.store(false, ordering: .releasing)
  }

  /// An order as a key: each sort key's field position, doubled, plus one when ascending.
  private static func key(_ ordering: RowOrdering) -> [Int] {
    ordering.keys.map { $0.position * 2 + ($0.ascending ? 1 : 0) }
  }
}

/// The ids holding one value of a looked-up field, and (once the bucket is large enough for
/// sorting it to matter) the orders its rows were read in.
struct LookupBucket: Sendable {
  /// The ids of the rows holding the value.
  var ids: Set<Value> = []
  /// The orders of the bucket's rows, for a bucket of at least ``ordersFrom`` ids.
  var order: BucketOrder?

  /// The smallest bucket whose orders are kept: a smaller one is sorted at each read, as
  /// cheaply as its orders would be kept up to date.
  static let ordersFrom = 64

  /// Adds the id of a row that now holds the value.
  mutating func add(_ id: Value) {
    ids.insert(id)
    rowsChanged()
  }

  /// Removes the id of a row that no longer holds the value.
  mutating func remove(_ id: Value) {
    ids.remove(id)
    rowsChanged()
  }

  /// Called after a row of the bucket was stored, replaced or removed: its kept orders no longer
  /// hold. A box a copy of the table shares is left to that copy.
  mutating func rowsChanged() {
    guard ids.count >= Self.ordersFrom else {
      order = nil
      return
    }
    if order != nil, isKnownUniquelyReferenced(&order) {
      order?.clear()
    } else {
      order = BucketOrder()
    }
  }
}

extension InMemoryTable {
  /// The rows of a query found in the kept order of the lookup bucket its filter's equality
  /// names (see ``candidates(for:)``): the bucket's rows sorted once in the query's order, then
  /// walked until the slice is full (the first read of a bucket since it changed selects among
  /// its rows instead: see ``BucketOrder``). `nil` when the filter narrows to no bucket large
  /// enough to keep orders for.
  func bucketOrderedSlice(_ query: Query) throws -> [Row]? {
    guard let (lookup, value) = bucketKey(for: query.filter),
      let bucket = lookups[lookup][value], let order = bucket.order
    else { return nil }
    let ordering = try RowOrdering(query.sort, schema: schema)
    let compiled = try CompiledFilter(query.filter, schema: schema)
    let sorted: [Row]
    switch order.rows(in: ordering, gather: { bucket.ids.compactMap { rows[$0] } }) {
    case .sorted(let rows): sorted = rows
    case .gathered(let rows):
      return ordering.orderedSlice(rows.filter(compiled.matches), offset: query.offset, limit: query.limit)
    }
    let limit = query.limit ?? Int.max
    var slice: [Row] = []
    slice.reserveCapacity(Swift.min(limit, 1024))
    var skipped = 0
    for row in sorted where compiled.matches(row) {
      if slice.count >= limit { break }
      if skipped < query.offset {
        skipped += 1
      } else {
        slice.append(row)
      }
    }
    return slice
  }

  /// The lookup and value of a bucket that holds every row the filter matches: that of an
  /// equality on a looked-up field, alone or in a conjunction.
  private func bucketKey(for filter: Filter) -> (lookup: Int, value: Value)? {
    switch filter {
    case .compare(let field, .equal, let value) where !value.isNull:
      guard let lookup = lookup(of: field) else { return nil }
      return (lookup, value)
    case .and(let parts):
      // Every row that matches holds the value of each equality of the conjunction, so the
      // bucket of any one holds them all.
      return parts.lazy.compactMap { bucketKey(for: $0) }.first
    default:
      return nil
    }
  }
}
