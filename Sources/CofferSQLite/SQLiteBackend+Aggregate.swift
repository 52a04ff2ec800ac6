@_spi(Backend) import Coffer
import CofferSQL

@_spi(Backend) extension SQLiteBackend: AggregateComputing {
  /// Computes the aggregate in SQLite (see ``SQLiteAggregate``) on a reader.
  ///
  /// SQLite's `sum` fails with "integer overflow" as soon as a running total leaves Int64, even
  /// when the whole sum fits (rows read in another order would not have failed): on that error
  /// the aggregate is computed again by the core's evaluator, which adds exactly, over the rows
  /// read on a reader — so the result is the exact sum, or valueOutOfRange when it does not fit.
  public func aggregate(_ aggregation: Aggregation) async throws -> [AggregateGroup<Value, Value>] {
    let table = try table(aggregation.query.entity)
    let built = try SQLiteAggregate(aggregation, in: table.layout)
    do {
      return try withReader(nil) { reader in
        let statement = try reader.statement(built.statement.sql)
        return try statement.withBindings(built.statement.bindings) {
          var groups: [AggregateGroup<Value, Value>] = []
          while try statement.stepReading() {
            groups.append(try built.group(SQLiteAggregateCells(statement: statement)))
          }
          // Without GROUP BY, SQLite answers one row even over no rows.
          return groups
        }
      }
    } catch let error as CofferError where Self.isIntegerOverflow(error) {
      return try await AggregateEvaluator.evaluate(aggregation, schema: table.schema) { query, visit in
        try read(query, on: nil, visit)
      }
    }
  }

  /// Whether SQLite failed a `sum` because a running total left Int64.
  private static func isIntegerOverflow(_ error: CofferError) -> Bool {
    guard let cause = error.underlying as? SQLiteResult else { return false }
    return cause.message.contains("integer overflow")
  }
}
