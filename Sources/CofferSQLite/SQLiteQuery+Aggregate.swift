@_spi(Backend) import Coffer

/// An ``Coffer/Aggregation`` as one SQLite statement: `SELECT [key,] … FROM table WHERE …
/// [GROUP BY key ORDER BY key]`, and how to read its rows back.
///
/// SQLite's own functions give the reference results here: `count(*)`, `count(DISTINCT …)`,
/// `min`/`max` (strings in the columns' BINARY collation, which is code-point order; blobs, UUIDs
/// included, by memcmp; dates and bools as the integers they are stored as), `sum` of integers
/// (exact, or the "integer overflow" error the backend answers by falling back to the core's
/// evaluator); an average of integers is that sum divided by `count`, as in the reference. A sum or average of doubles selects
/// `count`, `sum`, `min` and `max` and is finished by `AggregateEvaluator.finishDoubles`, since
/// SQLite turns the NaN of `+inf + -inf` into NULL. `ORDER BY key` puts NULL first; `-0.0` and
/// `0.0` group together (they compare equal) and the key is normalized to `+0.0`.
struct SQLiteAggregate {
  /// The statement and its parameters.
  var query = SQLiteQuery()
  /// The kind of the grouping field, when grouped.
  let keyKind: FieldKind?
  /// The kind of the field aggregated (`int` for a count).
  let kind: FieldKind
  let aggregation: Aggregation

  init(_ aggregation: Aggregation, in table: SQLiteTable) throws {
    self.aggregation = aggregation
    let field = try aggregation.function.field.map { try table.column($0) }
    let kind = AggregateEvaluator.kind(of: aggregation, in: table.schema)
    self.kind = kind
    var columns: [String] = []
    var keyKind: FieldKind?
    if let groupBy = aggregation.groupBy {
      let key = try table.column(groupBy)
      keyKind = table.schema.field(named: groupBy)?.kind
      columns.append(key)
    }
    self.keyKind = keyKind
    switch (aggregation.function, field) {
    case (.countDistinct, let field?): columns.append("count(DISTINCT \(field))")
    case (.min, let field?): columns.append("min(\(field))")
    case (.max, let field?): columns.append("max(\(field))")
    case (.sum, let field?) where kind == .int: columns.append("sum(\(field))")
    case (.average, let field?) where kind == .int: columns += ["sum(\(field))", "count(\(field))"]
    case (.sum, let field?), (.average, let field?):
      columns += ["count(\(field))", "sum(\(field))", "min(\(field))", "max(\(field))"]
    default: columns.append("count(*)")
    }
    query.sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table.table)"
    try query.appendWhere(aggregation.query.filter, table)
    if let key = columns.first, keyKind != nil { query.sql += " GROUP BY \(key) ORDER BY \(key) ASC" }
  }

  /// The group at the statement's current row.
  func group(_ statement: SQLiteStatement) throws -> AggregateGroup<Value, Value> {
    var column: Int32 = 0
    var key = Value.null
    if let keyKind {
      key = AggregateEvaluator.normalized(try statement.value(at: 0, keyKind))
      column = 1
    }
    let value: Value
    switch aggregation.function {
    case .count, .countDistinct:
      value = .int(statement.int(at: column))
    case .min, .max:
      value = AggregateEvaluator.normalized(try statement.value(at: column, kind))
    case .sum where kind == .int:
      value = try statement.value(at: column, .int)
    case .average where kind == .int:
      // The exact sum divided by the count, as the reference divides it: SQLite's `avg`
      // approximates a sum whose running total leaves Int64 instead of failing.
      guard case .int(let sum) = try statement.value(at: column, .int) else {
        value = .null
        break
      }
      value = .double(Double(sum) / Double(statement.int(at: column + 1)))
    case .sum, .average:
      func number(_ offset: Int32) throws -> Double? {
        guard case .double(let number) = try statement.value(at: column + offset, .double) else { return nil }
        return number
      }
      value = try AggregateEvaluator.finishDoubles(
        count: Int(statement.int(at: column)), sum: try number(1), smallest: try number(2),
        largest: try number(3),
        aggregation)
    }
    return AggregateGroup(key: key, value: value)
  }
}
