/// The total order of a query's rows: its sort keys (nulls first ascending, last descending),
/// then id ascending.
@_spi(Backend) public struct RowOrdering: Sendable {
  let keys: [(position: Int, ascending: Bool)]
  let idPosition: Int

  /// Resolves sort keys against a schema.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the schema does not have.
  public init(_ sort: [Sort], schema: EntitySchema) throws {
    keys = try sort.map { key in
      guard let position = schema.position(of: key.field) else {
        throw QueryValidator.unknownField(key.field, schema)
      }
      return (position, key.ascending)
    }
    idPosition = schema.idPosition
  }

  /// Whether `lhs` comes before `rhs`.
  public func areInIncreasingOrder(_ lhs: Row, _ rhs: Row) -> Bool { compare(lhs, rhs) < 0 }

  /// -1, 0 or 1 as `lhs` comes before, ties with, or after `rhs`. Rows tie only when they
  /// have the same id.
  public func compare(_ lhs: Row, _ rhs: Row) -> Int {
    for key in keys {
      let order = ValueOrder.compare(lhs[key.position], rhs[key.position])
      if order != 0 { return key.ascending ? order : -order }
    }
    return ValueOrder.compare(lhs[idPosition], rhs[idPosition])
  }

  /// Sorts rows and cuts the `offset`/`limit` slice, using a bounded selection when the slice
  /// is small compared with the input.
  public func orderedSlice(_ rows: [Row], offset: Int, limit: Int?) -> [Row] {
    let start = max(0, offset)
    guard start < rows.count else { return [] }
    // start < rows.count, so this cannot overflow however large the limit.
    let end = limit.map { start + min(rows.count - start, max(0, $0)) } ?? rows.count
    if end <= Self.selectionLimit, end * 8 < rows.count {
      return Array(firstRows(end, of: rows)[start...])
    }
    var sorted = rows
    sorted.sort { compare($0, $1) < 0 }
    return Array(sorted[start..<end])
  }

  /// The largest slice end a bounded selection serves; a larger one sorts everything.
  public static let selectionLimit = 256

  /// The positions of the fields the order reads: the sort keys', then the id's. A row that has
  /// the right values at these compares as the whole row would.
  public var positions: [Int] { keys.map(\.position) + [idPosition] }

  /// The first `count` rows in order, found in one pass that keeps them in a sorted buffer.
  private func firstRows(_ count: Int, of rows: [Row]) -> [Row] {
    var selection = FirstRows<Void>(count, in: self)
    for row in rows where selection.admits(row) { selection.keep(row, ()) }
    return selection.kept.map(\.row)
  }
}

/// The first rows of a stream in a ``RowOrdering``, each with a payload, kept in a sorted
/// buffer: most rows are turned away by one comparison with the buffer's last. A backend that
/// reads rows in another order uses it to decode only the rows it keeps: it offers each row with
/// only the fields of ``RowOrdering/positions`` filled, and where to find the rest as payload.
@_spi(Backend) public struct FirstRows<Payload> {
  /// How many rows the selection keeps at most.
  public let count: Int
  let ordering: RowOrdering
  /// The rows kept so far, in order, at most ``count``.
  public private(set) var kept: [(row: Row, payload: Payload)] = []

  /// An empty selection of the first `count` rows in `ordering`.
  public init(_ count: Int, in ordering: RowOrdering) {
    self.count = max(0, count)
    self.ordering = ordering
    kept.reserveCapacity(self.count + 1)
  }

  /// Whether `row` would be kept if offered now: there is room, or it comes before the last
  /// row kept.
  public func admits(_ row: Row) -> Bool {
    guard count > 0 else { return false }
    guard kept.count == count, let last = kept.last else { return true }
    return ordering.compare(row, last.row) < 0
  }

  /// Keeps a row that ``admits(_:)`` said would be kept, dropping the last one when full.
  public mutating func keep(_ row: Row, _ payload: Payload) {
    if kept.count == count { kept.removeLast() }
    // The first kept row that comes after this one: binary search.
    var low = 0
    var high = kept.count
    while low < high {
      let middle = (low + high) / 2
      if ordering.compare(kept[middle].row, row) < 0 { low = middle + 1 } else { high = middle }
    }
    kept.insert((row, payload), at: low)
  }
}
