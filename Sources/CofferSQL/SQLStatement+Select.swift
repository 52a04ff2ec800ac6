@_spi(Backend) import Coffer

extension SQLStatement {
  /// The `ORDER BY` keys of a sort: nulls first ascending and last descending, ties broken by
  /// id — ascending, or descending when `tiesDescending` — unless the sort has the id already.
  @inlinable
  package static func orderKeys(_ sort: [Sort], in table: SQLTableLayout, tiesDescending: Bool = false) throws
    -> String
  {
    var keys: [String] = []
    var sortsByID = false
    for key in sort {
      let column = try table.column(key.field)
      keys.append(Dialect.orderKey(column, ascending: key.ascending))
      if column == table.idColumn { sortsByID = true }
    }
    if !sortsByID { keys.append("\(table.idColumn) \(tiesDescending ? "DESC" : "ASC")") }
    return keys.joined(separator: ", ")
  }

  /// `SELECT list FROM table WHERE … ORDER BY …` without a slice; `list` is every column unless
  /// given.
  @inlinable
  package static func ordered(
    _ query: Query, in table: SQLTableLayout, list: String? = nil, tiesDescending: Bool = false
  ) throws -> Self {
    var built = Self("SELECT \(list ?? table.selectList) FROM \(table.table)")
    try built.appendWhere(query.filter, table)
    built.sql += " ORDER BY " + (try orderKeys(query.sort, in: table, tiesDescending: tiesDescending))
    return built
  }

  /// `SELECT list FROM table WHERE … ORDER BY …` and the query's slice.
  @inlinable
  package static func select(_ query: Query, in table: SQLTableLayout, list: String? = nil) throws -> Self {
    var built = try ordered(query, in: table, list: list)
    Dialect.appendSlice(limit: query.limit, offset: query.offset, to: &built)
    return built
  }

  /// `SELECT count(*) FROM table WHERE …` (a slice is the caller's to apply).
  @inlinable
  package static func count(_ filter: Filter, in table: SQLTableLayout) throws -> Self {
    var built = Self("SELECT count(*) FROM \(table.table)")
    try built.appendWhere(filter, table)
    return built
  }

  /// `DELETE FROM table WHERE …`: a delete by query.
  @inlinable
  package static func delete(_ filter: Filter, in table: SQLTableLayout) throws -> Self {
    var built = Self("DELETE FROM \(table.table)")
    try built.appendWhere(filter, table)
    return built
  }

  /// The first `limit` rows of each value of `field` among those `query` selects, in its order:
  /// `SELECT columns FROM (SELECT columns, row_number() OVER (PARTITION BY field ORDER BY …) AS
  /// rank FROM table WHERE …) AS ranked WHERE rank <= ? ORDER BY …`, ties by id ascending.
  @inlinable
  package static func selectFirst(_ limit: Int, per field: String, of query: Query, in table: SQLTableLayout)
    throws -> Self
  {
    let order = try orderKeys(query.sort, in: table)
    // A name no column has, compared as the engine compares names.
    let taken = Set(table.columnNames.map(Dialect.comparedName))
    var rank = "coffer rank"
    while taken.contains(Dialect.comparedName(rank)) { rank += "'" }
    let rankColumn = SQLIdentifier.quoted(rank)
    var built = Self(
      "SELECT \(table.selectList) FROM (SELECT \(table.selectList), row_number() OVER (PARTITION BY "
        + "\(try table.column(field)) ORDER BY \(order)) AS \(rankColumn) FROM \(table.table)")
    try built.appendWhere(query.filter, table)
    let most = built.bind(.int(Int64(max(0, limit))), .int)
    built.sql += ") AS ranked WHERE \(rankColumn) <= \(most) ORDER BY \(order)"
    return built
  }
}
