@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

extension PostgresApplier {
  /// Applies a batch of one update or delete by id, on the condition that the row is still as
  /// it was read, in one statement — what ``Coffer/Store/modify(_:id:retries:_:)`` and a
  /// transaction that reads and writes one row send. `nil` for any other batch.
  ///
  /// The statement changes the row only where every column still holds what was read. Under
  /// `READ COMMITTED`, an `UPDATE` or `DELETE` that meets a row a concurrent transaction is
  /// changing waits for it, then evaluates its condition again on the row as that transaction
  /// left it: the check and the write are one atomic step, with no serializable transaction
  /// and its four more round trips. When no row was changed, the row is read to say why.
  func applyIfUnchanged() async throws -> ChangeSummary? {
    guard changes.operations.count == 1, changes.preconditions.count == 1 else { return nil }
    let precondition = changes.preconditions[0]
    let operation = changes.operations[0]
    guard case .rows(let expected) = precondition.expectation, expected.count == 1,
      precondition.query.entity == operation.entity
    else { return nil }
    let (table, reshape) = try resolve(operation.entity)
    let schema = table.schema
    guard let layout = precondition.query.layout, layout == schema, reshape.isIdentity,
      let id = precondition.query.lookedUpID(in: schema)
    else { return nil }
    let read = expected[0]
    var binds: PostgresBindings
    let sql: String
    switch operation {
    case .update(_, let row) where row[schema.idPosition] == id:
      binds = bindings(row, table)
      sql = table.updateIfUnchangedSQL
    case .delete(_, let deleted) where deleted == id:
      binds = PostgresBindings(capacity: table.kinds.count)
      binds.append(id, as: table.kinds[schema.idPosition])
      sql = table.deleteIfUnchangedSQL
    default:
      return nil
    }
    for (index, value) in read.values.enumerated() where index != schema.idPosition {
      binds.append(value, as: table.kinds[index])
    }
    guard try await query(sql, binds).isEmpty else {
      var summary = ChangeSummary()
      if case .update(_, let row) = operation {
        summary.updated = 1
        log?.withLock { $0.stored(row, in: schema, existed: true) }
      } else {
        summary.deleted = 1
        log?.withLock { $0.removed(id: id, from: schema) }
      }
      return summary
    }
    // Removed or changed since it was read: the error names which.
    try precondition.verify(try await selected(precondition.query), store: store)
    // Changed and changed back in between: still a conflict, as the row was written meanwhile.
    throw ChangeSet.Precondition.conflict(entity: schema.name, id: id, store: store, what: "was changed")
  }
}
