@_spi(Backend) import Coffer
import CofferSQL

extension SQLiteBackend {
  /// The error for new unique indexes that stored rows break, naming the same row every backend
  /// names (see ``Coffer/UniqueClash``): the clashes of every unique index of the table are
  /// looked for, not only of the index whose creation failed.
  func uniqueClash(
    in table: SQLiteTable, on connection: SQLiteConnection, failed: Index, underlying: CofferError
  )
    -> CofferError
  {
    var clashes: [UniqueClash] = []
    for index in table.schema.uniqueIndexes {
      guard let clash = try? smallestClash(index, in: table, on: connection) else { continue }
      clashes.append(clash)
    }
    if let clash = UniqueClash.smallest(of: clashes) {
      return clash.error(entity: table.schema.name, store: name, underlying: underlying.underlying)
    }
    let fields = failed.fields.joined(separator: ", ")
    return CofferError(
      .uniqueViolation,
      "\(table.schema.name) rows already stored share values of \(fields), so they cannot be made unique. "
        + "Remove or change the duplicates first. Nothing was changed.",
      store: name, entity: table.schema.name, field: failed.fields.joined(separator: ","),
      underlying: underlying.underlying)
  }

  /// The smallest id whose row shares its (non-null) values of the index's fields with another
  /// row, and the smallest id of those other rows; `nil` when the index holds.
  private func smallestClash(_ index: Index, in table: SQLiteTable, on connection: SQLiteConnection) throws
    -> UniqueClash?
  {
    let id = table.columns[table.schema.idPosition]
    let kinds = [table.kinds[table.schema.idPosition]]
    let columns = try index.fields.map { try table.column($0) }
    let list = columns.joined(separator: ", ")
    let present = columns.map { "\($0) IS NOT NULL" }.joined(separator: " AND ")
    let smallest = try connection.statement(
      "SELECT min(\(id)) FROM \(table.table) WHERE (\(list)) IN "
        + "(SELECT \(list) FROM \(table.table) WHERE \(present) GROUP BY \(list) HAVING count(*) > 1)"
    ).rows([], kinds: kinds)
    guard let first = smallest.first?[0], !first.isNull else { return nil }
    let same = columns.map { "\($0) = (SELECT \($0) FROM \(table.table) WHERE \(id) = ?1)" }
    let other = try connection.statement(
      "SELECT min(\(id)) FROM \(table.table) WHERE \(id) <> ?1 AND \(same.joined(separator: " AND "))"
    ).rows([first], kinds: kinds)
    return UniqueClash(index: index, id: first, other: other.first?[0] ?? .null)
  }
}
