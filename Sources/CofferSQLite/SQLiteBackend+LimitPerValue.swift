@_spi(Backend) import Coffer

extension SQLiteQuery {
  /// The first `limit` rows of each value of `field` among those `query` selects, in its order:
  /// `SELECT columns FROM (SELECT columns, row_number() OVER (PARTITION BY field ORDER BY …) AS
  /// rank FROM table WHERE …) WHERE rank <= ? ORDER BY …`, ties by id ascending.
  static func selectFirst(_ limit: Int, per field: String, of query: Query, in table: SQLiteTable) throws
    -> SQLiteQuery
  {
    var keys: [String] = []
    for key in query.sort { keys.append("\(try table.column(key.field)) \(key.ascending ? "ASC" : "DESC")") }
    keys.append("\(table.columns[table.schema.idPosition]) ASC")
    let order = keys.joined(separator: ", ")
    // A name no column has (SQLite compares names with ASCII case folded).
    let taken = Set(table.columnNames.map(SQLiteIdentifier.folded))
    var rank = "coffer rank"
    while taken.contains(SQLiteIdentifier.folded(rank)) { rank += "'" }
    let rankColumn = SQLiteIdentifier.quoted(rank)
    var built = SQLiteQuery()
    built.sql =
      "SELECT \(table.selectList) FROM (SELECT \(table.selectList), row_number() OVER (PARTITION BY "
      + "\(try table.column(field)) ORDER BY \(order)) AS \(rankColumn) FROM \(table.table)"
    try built.appendWhere(query.filter, table)
    built.sql += ") WHERE \(rankColumn) <= ? ORDER BY \(order)"
    built.parameters.append(.int(Int64(max(0, limit))))
    return built
  }
}

@_spi(Backend) extension SQLiteBackend: LimitPerValueReading {
  /// Keeps the first rows of each value of a field with a window function, in one statement
  /// on a reader (see ``Coffer/LimitPerValueReading``).
  public func read(
    _ query: Query, first limit: Int, per field: String, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    let table = try table(query.entity)
    let built = try SQLiteQuery.selectFirst(limit, per: field, of: query, in: table)
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    try withReader(nil) { reader in
      let statement = try reader.statement(built.sql)
      try statement.withBindings(built.parameters) {
        let fields = SQLiteFields(statement: statement, kinds: table.kinds)
        let visible: any StoredFields = view?.showing(fields) ?? fields
        while try statement.stepReading() { try visit(visible) }
      }
    }
  }
}
