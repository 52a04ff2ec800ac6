@_spi(Backend) import Coffer
import PostgresNIO

extension PostgresApplier {
  /// Checks one of the batch's preconditions inside its transaction: a number of rows with
  /// `count(*)` on the server, never by fetching them; rows as the query selects them now (the
  /// ids alone for a query read in the id field alone, as the reference rules pin the rows they
  /// delete by id).
  func check(_ precondition: ChangeSet.Precondition) async throws {
    let query = precondition.query
    if case .count(let expected) = precondition.expectation {
      let table = try table(query.entity)
      let built = try PostgresSQL.count(query.filter, in: table)
      if query.slice(ofCount: try await counted(built.sql, built.binds)) == expected { return }
    }
    // Also the error of a count that differs: the rows tell which one it names.
    try precondition.verify(try await selected(query), store: store)
    if case .count = precondition.expectation {
      // The transaction reads one snapshot, so the rows agree with the count; should they not,
      // the precondition failed all the same.
      throw ChangeSet.Precondition.conflict(entity: query.entity, id: nil, store: store, what: "changed")
    }
  }

  /// Runs a statement of the batch that answers one number, `count(*)`.
  func counted(_ sql: String, _ binds: PostgresBindings) async throws -> Int {
    guard let cell = try await query(sql, binds).first?.first(where: { _ in true }),
      case .int(let count) = try PostgresValues.read(cell.bytes, as: .int)
    else { return 0 }
    return Int(count)
  }
}
