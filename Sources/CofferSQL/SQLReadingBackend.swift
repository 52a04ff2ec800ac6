@_spi(Backend) import Coffer

/// A backend whose reads run statements built with ``SQLStatement``: it finds a prepared
/// entity's table and runs a select, and the reads that are the same on every SQL engine are
/// written once on top of that.
///
/// It gives ``Coffer/LimitPerValueReading``: the first rows of each value of a field, in one
/// statement with a window function (``SQLStatement/selectFirst(_:per:of:in:)``).
package protocol SQLReadingBackend: LimitPerValueReading {
  /// The engine's SQL.
  associatedtype Dialect: SQLDialect
  /// A prepared entity's table.
  associatedtype Table: SQLEntityTable

  /// The prepared entity with a name.
  ///
  /// - Throws: ``Coffer/CofferError/Code/unknownEntity`` when it was never prepared,
  ///   ``Coffer/CofferError/Code/closed`` when the store is closed.
  func table(_ entity: String) throws -> Table

  /// Runs a select of the table's columns on a pooled connection and hands over each row it
  /// returns, shown through `view` when the query reads another layout than the table's.
  func readSelect(
    _ statement: SQLStatement<Dialect>, of table: Table, through view: ReshapedFields?,
    _ visit: (any StoredFields) throws -> Void
  ) async throws
}

extension SQLReadingBackend {
  /// Keeps the first rows of each value of a field with a window function, in one statement
  /// (see ``Coffer/LimitPerValueReading``).
  @_spi(Backend) public func read(
    _ query: Query, first limit: Int, per field: String, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    let table = try table(query.entity)
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    let statement = try SQLStatement<Dialect>.selectFirst(limit, per: field, of: query, in: table.layout)
    try await readSelect(statement, of: table, through: view, visit)
  }
}
