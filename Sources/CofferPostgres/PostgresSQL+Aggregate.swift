@_spi(Backend) import Coffer
import CofferSQL
import NIOCore
import PostgresNIO

/// An ``Coffer/Aggregation`` as one PostgreSQL statement (see ``CofferSQL/SQLAggregate``).
///
/// What each function becomes, so that every result is the reference one:
///
/// - `min`/`max` on the columns as stored: text columns are `COLLATE "C"` (code-point order),
///   `timestamptz` is chronological to the microsecond; booleans, UUIDs and bytes as
///   ``PostgresDialect/extreme(_:_:smallest:)`` says.
/// - `sum(bigint)` is `numeric`, read as text: a sum outside Int64 is valueOutOfRange, whatever
///   the order the server added the rows in.
/// - A sum or average of doubles selects `count`, `min`, `max` and the `sum` of the finite
///   values (the sum is not used when there is an infinity, and a finite sum whose total leaves
///   the range fails with SQLSTATE 22003), finished by `AggregateEvaluator.finishDoubles`. On
///   22003 the backend asks again with `exactDoubleSums`: the finite values are then added as
///   `numeric`, which cannot overflow, and the text read back becomes an infinite `Double` when
///   the sum is beyond its range — so an infinity among values whose finite part overflows
///   gives that infinity, as in the reference, and a finite overflow is still valueOutOfRange.
typealias PostgresAggregate = SQLAggregate<PostgresDialect>

/// The cells of one result row of a ``PostgresAggregate``.
struct PostgresAggregateCells: SQLAggregateCells {
  let cells: [ByteBuffer?]

  init(_ row: PostgresRow) { cells = row.map(\.bytes) }

  func value(at column: Int, _ kind: FieldKind) throws -> Value {
    try PostgresValues.read(cells[column], as: kind)
  }

  func integerSum(at column: Int) throws -> (exact: Int64?, approximate: Double)? {
    guard let text = cells[column].map({ String(buffer: $0) }) else { return nil }
    if let sum = Int64(text) { return (sum, Double(sum)) }
    guard let sum = Double(text) else { throw PostgresValues.malformed(.int) }
    return (nil, sum)
  }

  func doubleSum(at column: Int, exact: Bool) throws -> Double? {
    guard exact else {
      guard case .double(let sum) = try value(at: column, .double) else { return nil }
      return sum
    }
    guard let text = cells[column].map({ String(buffer: $0) }) else { return nil }
    guard let sum = Double(text) else { throw PostgresValues.malformed(.double) }
    return sum
  }
}
