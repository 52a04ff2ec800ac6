@_spi(Backend) import Coffer
import PostgresNIO

/// An ``Coffer/Aggregation`` as one PostgreSQL statement: `SELECT [key,] … FROM table WHERE …
/// [GROUP BY key ORDER BY key ASC NULLS FIRST]`, and how to read its row cells back.
///
/// What each function becomes, so that every result is the reference one:
///
/// - `count(*)`, `count(DISTINCT …)`; `-0.0` and `0.0` are one value, as in the reference.
/// - `min`/`max` on the columns as stored: text columns are `COLLATE "C"` (code-point order),
///   `timestamptz` is chronological to the microsecond. Booleans have no `min`/`max`: `bool_and`
///   and `bool_or` are the same thing. UUIDs and bytes compare through their lowercase hex text
///   (`uuid::text`, `encode(bytea, 'hex')`) in `COLLATE "C"`, whose order is their bytes', since
///   `min`/`max` on `uuid` and `bytea` are missing from the servers Coffer supports.
/// - `sum(bigint)` is `numeric`, read as text: a sum outside Int64 is valueOutOfRange, whatever
///   the order the server added the rows in. An average of integers is that exact sum divided by
///   `count`, as in the reference.
/// - A sum or average of doubles selects `count`, `min`, `max` and the `sum` of the finite
///   values (the sum is not used when there is an infinity, and a finite sum whose total leaves
///   the range fails with SQLSTATE 22003), finished by `AggregateEvaluator.finishDoubles`. On
///   22003 the backend asks again with `exactDoubleSums`: the finite values are then added as
///   `numeric`, which cannot overflow, and the text read back becomes an infinite `Double` when
///   the sum is beyond its range — so an infinity among values whose finite part overflows
///   gives that infinity, as in the reference, and a finite overflow is still valueOutOfRange.
struct PostgresAggregate {
  /// The statement and its parameters.
  var built = PostgresSQL()
  /// The kind of the grouping field, when grouped.
  let keyKind: FieldKind?
  /// The kind of the field aggregated (`int` for a count).
  let kind: FieldKind
  let aggregation: Aggregation
  /// Whether a sum of doubles adds the finite values as `numeric` and reads them as text.
  let exactDoubleSums: Bool

  init(_ aggregation: Aggregation, in table: PostgresTable, exactDoubleSums: Bool = false) throws {
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
    case (.min, let field?): columns.append(Self.extreme(field, kind, smallest: true))
    case (.max, let field?): columns.append(Self.extreme(field, kind, smallest: false))
    case (.sum, let field?) where kind == .int: columns.append("sum(\(field))::text")
    case (.average, let field?) where kind == .int: columns += ["sum(\(field))::text", "count(\(field))"]
    case (.sum, let field?), (.average, let field?):
      let finite = "abs(\(field)) <> 'Infinity'::float8"
      let sum =
        exactDoubleSums
        ? "(sum(\(field)::numeric) FILTER (WHERE \(finite)))::text" : "sum(\(field)) FILTER (WHERE \(finite))"
      columns += ["count(\(field))", sum, "min(\(field))", "max(\(field))"]
    default: columns.append("count(*)")
    }
    built.sql = "SELECT \(columns.joined(separator: ", ")) FROM \(table.table)"
    try built.appendWhere(aggregation.query.filter, table)
    if let key { built.sql += " GROUP BY \(key) ORDER BY \(key) ASC NULLS FIRST" }
  }

  /// The smallest or largest value of a column, as a value of the column's type.
  private static func extreme(_ column: String, _ kind: FieldKind, smallest: Bool) -> String {
    let function = smallest ? "min" : "max"
    switch kind {
    case .bool: return smallest ? "bool_and(\(column))" : "bool_or(\(column))"
    case .uuid: return "\(function)(\(column)::text COLLATE \"C\")::uuid"
    case .bytes: return "decode(\(function)(encode(\(column), 'hex') COLLATE \"C\"), 'hex')"
    default: return "\(function)(\(column))"
    }
  }

  /// The group a result row holds.
  func group(_ row: PostgresRow) throws -> AggregateGroup<Value, Value> {
    let cells = row.map(\.bytes)
    var column = 0
    var key = Value.null
    if let keyKind {
      key = AggregateEvaluator.normalized(try PostgresValues.read(cells[0], as: keyKind))
      column = 1
    }
    let value: Value
    switch aggregation.function {
    case .count, .countDistinct:
      value = try PostgresValues.read(cells[column], as: .int)
    case .min, .max:
      value = AggregateEvaluator.normalized(try PostgresValues.read(cells[column], as: kind))
    case .sum where kind == .int:
      guard let text = cells[column].map({ String(buffer: $0) }) else {
        value = .null
        break
      }
      guard let sum = Int64(text) else { throw AggregateEvaluator.outOfRange(aggregation) }
      value = .int(sum)
    case .average where kind == .int:
      // The exact sum divided by the count, as the reference divides it.
      guard let text = cells[column].map({ String(buffer: $0) }),
        let sum = Int64(text).map(Double.init) ?? Double(text),
        case .int(let count) = try PostgresValues.read(cells[column + 1], as: .int)
      else {
        value = .null
        break
      }
      value = .double(sum / Double(count))
    case .sum, .average:
      func number(_ offset: Int) throws -> Double? {
        if offset == 1, exactDoubleSums {
          guard let text = cells[column + offset].map({ String(buffer: $0) }) else { return nil }
          guard let sum = Double(text) else { throw PostgresValues.malformed(.double) }
          return sum
        }
        guard case .double(let number) = try PostgresValues.read(cells[column + offset], as: .double) else {
          return nil
        }
        return number
      }
      guard case .int(let count) = try PostgresValues.read(cells[column], as: .int) else {
        throw PostgresValues.malformed(.int)
      }
      value = try AggregateEvaluator.finishDoubles(
        count: Int(count), sum: try number(1), smallest: try number(2), largest: try number(3), aggregation)
    }
    return AggregateGroup(key: key, value: value)
  }
}
