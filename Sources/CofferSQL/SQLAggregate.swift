@_spi(Backend) import Coffer

/// An ``Coffer/Aggregation`` as one statement: `SELECT [key,] … FROM table WHERE … [GROUP BY key
/// ORDER BY key]`, and how to read its rows back, so that every result is the reference one.
///
/// What each function selects (the dialect supplies the pieces marked so):
///
/// - `count(*)`, `count(DISTINCT …)`; `-0.0` and `0.0` are one value, as in the reference, and
///   a key is normalized to `+0.0`.
/// - `min`/`max`: the dialect's ``SQLDialect/extreme(_:_:smallest:)``, in code-point order for
///   strings, byte order for bytes and UUIDs, chronological for dates.
/// - a sum of integers: the dialect's exact ``SQLDialect/integerSum(_:)``; an average of
///   integers is that exact sum divided by `count`, as in the reference.
/// - a sum or average of doubles: `count`, the dialect's ``SQLDialect/doubleSum(_:exact:)``,
///   `min` and `max`, finished by `AggregateEvaluator.finishDoubles`.
package struct SQLAggregate<Dialect: SQLDialect> {
  /// The statement and its parameters.
  package var statement: SQLStatement<Dialect>
  /// The kind of the grouping field, when grouped.
  package let keyKind: FieldKind?
  /// The kind of the field aggregated (`int` for a count).
  package let kind: FieldKind
  /// What is computed.
  package let aggregation: Aggregation
  /// Whether the sum of doubles is the dialect's exact one.
  package let exactDoubleSums: Bool

  /// The statement of `aggregation` on `table`.
  package init(_ aggregation: Aggregation, in table: SQLTableLayout, exactDoubleSums: Bool = false) throws {
    self.aggregation = aggregation
    self.exactDoubleSums = exactDoubleSums
    let kind = AggregateEvaluator.kind(of: aggregation, in: table.schema)
    self.kind = kind
    var columns: [String] = []
    var key: String?
    if let groupBy = aggregation.groupBy {
      let (column, keyKind) = try table.field(groupBy)
      self.keyKind = keyKind
      key = column
      columns.append(column)
    } else {
      self.keyKind = nil
    }
    let field = try aggregation.function.field.map { try table.column($0) }
    switch (aggregation.function, field) {
    case (.countDistinct, let field?): columns.append("count(DISTINCT \(field))")
    case (.min, let field?): columns.append(Dialect.extreme(field, kind, smallest: true))
    case (.max, let field?): columns.append(Dialect.extreme(field, kind, smallest: false))
    case (.sum, let field?) where kind == .int: columns.append(Dialect.integerSum(field))
    case (.average, let field?) where kind == .int: columns += [Dialect.integerSum(field), "count(\(field))"]
    case (.sum, let field?), (.average, let field?):
      columns += [
        "count(\(field))", Dialect.doubleSum(field, exact: exactDoubleSums), "min(\(field))", "max(\(field))",
      ]
    default: columns.append("count(*)")
    }
    statement = SQLStatement("SELECT \(columns.joined(separator: ", ")) FROM \(table.table)")
    try statement.appendWhere(aggregation.query.filter, table)
    if let key { statement.sql += " GROUP BY \(key) ORDER BY \(Dialect.orderKey(key, ascending: true))" }
  }

  /// The group one result row holds.
  package func group(_ cells: some SQLAggregateCells) throws -> AggregateGroup<Value, Value> {
    var column = 0
    var key = Value.null
    if let keyKind {
      key = AggregateEvaluator.normalized(try cells.value(at: 0, keyKind))
      column = 1
    }
    let value: Value
    switch aggregation.function {
    case .count, .countDistinct:
      value = try cells.value(at: column, .int)
    case .min, .max:
      value = AggregateEvaluator.normalized(try cells.value(at: column, kind))
    case .sum where kind == .int:
      guard let sum = try cells.integerSum(at: column) else {
        value = .null
        break
      }
      guard let exact = sum.exact else { throw AggregateEvaluator.outOfRange(aggregation) }
      value = .int(exact)
    case .average where kind == .int:
      // The exact sum divided by the count, as the reference divides it.
      guard let sum = try cells.integerSum(at: column),
        case .int(let count) = try cells.value(at: column + 1, .int)
      else {
        value = .null
        break
      }
      value = .double(sum.approximate / Double(count))
    case .sum, .average:
      guard case .int(let count) = try cells.value(at: column, .int) else { throw Self.malformedCount() }
      value = try AggregateEvaluator.finishDoubles(
        count: Int(count), sum: try cells.doubleSum(at: column + 1, exact: exactDoubleSums),
        smallest: try number(cells, column + 2), largest: try number(cells, column + 3), aggregation)
    }
    return AggregateGroup(key: key, value: value)
  }

  private func number(_ cells: some SQLAggregateCells, _ column: Int) throws -> Double? {
    guard case .double(let number) = try cells.value(at: column, .double) else { return nil }
    return number
  }

  private static func malformedCount() -> CofferError {
    CofferError(
      .corruptStore,
      "An aggregate's count read back as no number; the table was changed by something other than Coffer.")
  }
}

/// The cells of one row of an ``SQLAggregate``'s result, as an engine reads them.
package protocol SQLAggregateCells {
  /// The value in a column (from 0), read as a field of `kind`.
  func value(at column: Int, _ kind: FieldKind) throws -> Value

  /// The dialect's ``SQLDialect/integerSum(_:)`` in a column: `nil` for NULL (no rows), else the
  /// sum as an Int64 when it fits (`exact`) and as a Double either way.
  func integerSum(at column: Int) throws -> (exact: Int64?, approximate: Double)?

  /// The dialect's ``SQLDialect/doubleSum(_:exact:)`` in a column, `nil` for NULL.
  func doubleSum(at column: Int, exact: Bool) throws -> Double?
}
