@_spi(Backend) import Coffer
import PostgresNIO

extension PostgresSQL {
  /// The first `limit` rows of each value of `field` among those `query` selects, in its order:
  /// `SELECT columns FROM (SELECT columns, row_number() OVER (PARTITION BY field ORDER BY …) AS
  /// rank FROM table WHERE …) AS ranked WHERE rank <= $n ORDER BY …`, ties by id ascending.
  static func selectFirst(_ limit: Int, per field: String, of query: Query, in table: PostgresTable) throws
    -> PostgresSQL
  {
    let order = try orderKeys(query.sort, in: table)
    var rank = "coffer rank"
    while table.columnNames.contains(rank) { rank += "'" }
    let rankColumn = PostgresIdentifier.quoted(rank)
    var built = PostgresSQL()
    built.sql =
      "SELECT \(table.selectList) FROM (SELECT \(table.selectList), row_number() OVER (PARTITION BY "
      + "\(try table.column(field)) ORDER BY \(order)) AS \(rankColumn) FROM \(table.table)"
    try built.appendWhere(query.filter, table)
    built.sql += ") AS ranked WHERE \(rankColumn) <= \(built.parameter(.int(Int64(max(0, limit))), .int))"
    built.sql += " ORDER BY \(order)"
    return built
  }
}

@_spi(Backend) extension PostgresBackend: LimitPerValueReading {
  /// Keeps the first rows of each value of a field with a window function, in one statement
  /// on a pooled connection (see ``Coffer/LimitPerValueReading``).
  public func read(
    _ query: Query, first limit: Int, per field: String, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    let table = try table(query.entity)
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    let built = try PostgresSQL.selectFirst(limit, per: field, of: query, in: table)
    try await readRows(built.sql, built.binds, of: table, through: view, on: nil, visit)
  }
}
