@_spi(Backend) import Coffer
import CofferSQL

/// A query's `SELECT` in SQLite's dialect (see ``CofferSQL/SQLStatement``), with the one thing
/// SQLite does its own way: ties of a query whose last sort key is descending.
///
/// When ``reversedTies`` is set, the SQL orders ties by id *descending* and the caller must put
/// each run of rows with equal sort keys back in id ascending order, then cut the offset and
/// limit (see ``orderedSlice(_:_:_:)``). An index on the sort fields holds ties in id order, so
/// SQLite reads it backwards as `key DESC, id DESC` with no sorting at all, where `key DESC,
/// id ASC` would make it sort every run of ties.
struct SQLiteSelect {
  /// The statement and its parameters.
  var query: SQLiteQuery
  /// The sort-key positions, when ties come back in id descending order.
  var reversedTies: [Int]?

  /// The statement's text.
  var sql: String { query.sql }
  /// The values bound to it.
  var parameters: [Value] { query.bindings }

  /// `SELECT columns FROM table WHERE … ORDER BY … LIMIT ? OFFSET ?`.
  init(_ query: Query, in table: SQLiteTable) throws {
    guard let last = query.sort.last, !last.ascending else {
      self.query = try SQLiteQuery.select(query, in: table.layout)
      return
    }
    self.query = try SQLiteQuery.ordered(query, in: table.layout, tiesDescending: true)
    reversedTies = query.sort.compactMap { table.schema.position(of: $0.field) }
    if let limit = query.limit {
      // One row more than needed shows whether the last run of ties is complete.
      let (sum, overflow) = query.offset.addingReportingOverflow(limit)
      let most = self.query.bind(.int(overflow || sum == .max ? -1 : Int64(sum + 1)), .int)
      self.query.sql += " LIMIT \(most)"
    }
  }

  /// Whether rows fetched for ``reversedTies`` may end inside a run of ties, so that the query
  /// must run again without a limit.
  static func mayCutTies(_ rows: [Row], _ query: Query, _ positions: [Int]) -> Bool {
    guard let limit = query.limit else { return false }
    let (wanted, overflow) = query.offset.addingReportingOverflow(limit)
    guard !overflow, wanted >= 1, wanted < .max, rows.count == wanted + 1 else { return false }
    return ties(rows[wanted - 1], rows[wanted], positions)
  }

  /// Rows in id descending order within runs of equal sort keys, put in id ascending order and
  /// cut to the query's offset and limit.
  static func orderedSlice(_ rows: [Row], _ query: Query, _ positions: [Int]) -> [Row] {
    var rows = rows
    var start = 0
    while start < rows.count {
      var end = start + 1
      while end < rows.count, ties(rows[start], rows[end], positions) { end += 1 }
      if end - start > 1 { rows[start..<end].reverse() }
      start = end
    }
    let from = min(rows.count, query.offset)
    let to = query.limit.map { from + min(rows.count - from, $0) } ?? rows.count
    return Array(rows[from..<to])
  }

  private static func ties(_ lhs: Row, _ rhs: Row, _ positions: [Int]) -> Bool {
    for position in positions where lhs[position] != rhs[position] { return false }
    return true
  }
}
