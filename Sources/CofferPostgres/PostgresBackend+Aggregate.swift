@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

@_spi(Backend) extension PostgresBackend: AggregateComputing {
  /// Computes the aggregate on the server (see ``PostgresAggregate``) on a pooled connection.
  public func aggregate(_ aggregation: Aggregation) async throws -> [AggregateGroup<Value, Value>] {
    do {
      return try await aggregate(aggregation, exactDoubleSums: false)
    } catch let error as CofferError where error.code == .valueOutOfRange {
      // A float8 sum of the finite values overflowed: add them again as numeric, which says
      // whether an infinity among them is the answer or the sum is truly out of range.
      guard let field = aggregation.function.field,
        (try? table(aggregation.query.entity))?.schema.field(named: field)?.kind == .double
      else { throw error }
      return try await aggregate(aggregation, exactDoubleSums: true)
    }
  }

  private func aggregate(_ aggregation: Aggregation, exactDoubleSums: Bool) async throws
    -> [AggregateGroup<Value, Value>]
  {
    let table = try table(aggregation.query.entity)
    let built = try PostgresAggregate(aggregation, in: table.layout, exactDoubleSums: exactDoubleSums)
    let action = "aggregating \(table.schema.name)"
    do {
      return try await withReadConnection(while: action) { connection in
        var groups: [AggregateGroup<Value, Value>] = []
        try await PostgresStatements.run(
          built.statement.sql, built.statement.bindings, on: connection, logger: logger
        ) {
          groups.append(try built.group(PostgresAggregateCells($0)))
        }
        return groups
      }
    } catch {
      // 22003: a sum of finite doubles left the range of float8.
      if PostgresFailure.sqlState(of: error) == "22003" { throw AggregateEvaluator.outOfRange(aggregation) }
      throw failure.surfaced(error, while: action, entity: table.schema.name)
    }
  }
}
