@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

@_spi(Backend) extension PostgresBackend: LimitPerValueReading {
  /// Keeps the first rows of each value of a field with a window function, in one statement
  /// on a pooled connection (see ``Coffer/LimitPerValueReading``).
  public func read(
    _ query: Query, first limit: Int, per field: String, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    let table = try table(query.entity)
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    let built = try PostgresSQL.selectFirst(limit, per: field, of: query, in: table.layout)
    try await readRows(built.sql, built.bindings, of: table, through: view, on: nil, visit)
  }
}
