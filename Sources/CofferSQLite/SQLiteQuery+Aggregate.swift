@_spi(Backend) import Coffer
import CofferSQL

/// An ``Coffer/Aggregation`` as one SQLite statement (see ``CofferSQL/SQLAggregate``).
///
/// SQLite's own functions give the reference results: `sum` of integers is exact, or fails with
/// the "integer overflow" error the backend answers by falling back to the core's evaluator. A
/// sum or average of doubles is finished by `AggregateEvaluator.finishDoubles`, since SQLite
/// turns the NaN of `+inf + -inf` into NULL. `ORDER BY key` puts NULL first; `-0.0` and `0.0`
/// group together (they compare equal).
typealias SQLiteAggregate = SQLAggregate<SQLiteDialect>

/// The cells of the row an ``SQLiteAggregate``'s statement is at.
struct SQLiteAggregateCells: SQLAggregateCells {
  let statement: SQLiteStatement

  func value(at column: Int, _ kind: FieldKind) throws -> Value {
    try statement.value(at: Int32(column), kind)
  }

  func integerSum(at column: Int) throws -> (exact: Int64?, approximate: Double)? {
    guard case .int(let sum) = try value(at: column, .int) else { return nil }
    return (sum, Double(sum))
  }

  func doubleSum(at column: Int, exact: Bool) throws -> Double? {
    guard case .double(let sum) = try value(at: column, .double) else { return nil }
    return sum
  }
}
