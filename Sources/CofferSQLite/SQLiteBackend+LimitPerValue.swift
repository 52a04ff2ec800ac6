@_spi(Backend) import Coffer
import CofferSQL

@_spi(Backend) extension SQLiteBackend: LimitPerValueReading {
  /// Keeps the first rows of each value of a field with a window function, in one statement
  /// on a reader (see ``Coffer/LimitPerValueReading``).
  public func read(
    _ query: Query, first limit: Int, per field: String, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    let table = try table(query.entity)
    let built = try SQLiteQuery.selectFirst(limit, per: field, of: query, in: table.layout)
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    try withReader(nil) { reader in
      let statement = try reader.statement(built.sql)
      try statement.withBindings(built.bindings) {
        let fields = SQLiteFields(statement: statement, kinds: table.kinds)
        let visible: any StoredFields = view?.showing(fields) ?? fields
        while try statement.stepReading() { try visit(visible) }
      }
    }
  }
}
