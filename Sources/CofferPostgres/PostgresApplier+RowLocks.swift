@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

/// Conditional batches whose preconditions are all about stored rows by id, checked under row
/// locks instead of in a serializable transaction.
///
/// A serializable transaction checks a precondition by reading, and the server fails it
/// (40001) when a concurrent batch changes what it read before it commits; the batch then
/// runs again after a pause. When every precondition names rows by id, all of them stored,
/// and the batch writes each of those rows, locking them (`SELECT … FOR UPDATE`, in table and
/// id order so that two such batches never wait for each other in a cycle) gives the same
/// guarantee: once locked and found as read, no other writer can change them before the batch
/// commits, and a concurrent writer waits instead of failing. That the batch writes every row
/// it checks matters: a serializable batch that later writes a row this one only locked would
/// not see the lock as a conflict, where it does see a write. A precondition about an absent
/// row, a count or a filter has no row to lock, and keeps the serializable transaction.
extension PostgresApplier {
  /// The preconditions in the order their rows are locked, when the batch can check them under
  /// row locks (see above); `nil` when it needs a serializable transaction.
  func rowLockOrder() throws -> [ChangeSet.Precondition]? {
    var locked: [(table: String, precondition: ChangeSet.Precondition)] = []
    var checked: [String: [Value]] = [:]
    for precondition in changes.preconditions {
      let table = try table(precondition.query.entity)
      guard checked[table.schema.name] == nil, let ids = precondition.query.lookedUpIDs(in: table.schema),
        !ids.isEmpty
      else { return nil }
      switch precondition.expectation {
      case .rows(let rows) where rows.count == ids.count: break
      case .count(let count) where count == ids.count: break
      default: return nil
      }
      checked[table.schema.name] = ids
      locked.append((table.table, precondition))
    }
    var written: [String: Set<Value>] = [:]
    for operation in changes.operations {
      let (table, reshape) = try resolve(operation.entity)
      switch operation {
      case .update(_, let row), .upsert(_, let row):
        written[operation.entity, default: []].insert(reshape(row)[table.schema.idPosition])
      case .delete(_, let id):
        written[operation.entity, default: []].insert(id)
      case .insert, .insertMany, .deleteMatching, .updateMatching:
        break
      }
    }
    for (entity, ids) in checked {
      guard let writes = written[entity], ids.allSatisfy(writes.contains) else { return nil }
    }
    return locked.sorted { $0.table < $1.table }.map(\.precondition)
  }

  /// Applies a batch of updates of one entity, on the condition that the rows it read by id —
  /// the same rows, all stored — are unchanged, in one statement: what a transaction that reads
  /// rows and writes them back (a transfer between two accounts) sends. `nil` for any other
  /// batch, and for one whose rows trade unique values among themselves (see
  /// `apply(_:to:checked:)`).
  ///
  /// The statement locks the rows read in id order, counts those that still hold what was read,
  /// and updates the rows only when that count is all of them; under `READ COMMITTED` a row a
  /// concurrent batch is changing is locked once that batch ends, and compared as it left it.
  /// It is atomic by itself: no `BEGIN`, `COMMIT`, or serializable transaction to fail and run
  /// again. When it changed nothing, the rows are read to say why.
  func applyIfRowsUnchanged() async throws -> ChangeSummary? {
    guard changes.preconditions.count == 1 else { return nil }
    let precondition = changes.preconditions[0]
    let entity = precondition.query.entity
    guard case .rows(let expected) = precondition.expectation else { return nil }
    let (table, reshape) = try resolve(entity)
    let schema = table.schema
    guard let layout = precondition.query.layout, layout == schema, reshape.isIdentity,
      let ids = precondition.query.lookedUpIDs(in: schema), ids.count == changes.operations.count,
      ids.count == expected.count, zip(ids, expected).allSatisfy({ $0 == $1[schema.idPosition] })
    else { return nil }
    var rows: [Row] = []
    var written: Set<Value> = []
    rows.reserveCapacity(ids.count)
    for operation in changes.operations {
      guard case .update(entity, let row) = operation, written.insert(row[schema.idPosition]).inserted else {
        return nil
      }
      rows.append(row)
    }
    // When the statement applies, the rows read are the rows stored: whether one statement may
    // change them all at once is known without reading them again.
    guard ids.allSatisfy(written.contains), UniqueRun.isIndependent(rows, stored: expected, schema: schema)
    else {
      return nil
    }
    let sql: String
    var binds: PostgresBindings
    if !rows.isEmpty, rows.count <= table.updateFewIfUnchangedSQL.count {
      sql = table.updateFewIfUnchangedSQL[rows.count - 1]
      binds = PostgresBindings(capacity: 2 * rows.count * table.kinds.count)
      for row in expected + rows {
        for (index, kind) in table.kinds.enumerated() { binds.append(row[index], as: kind) }
      }
    } else {
      sql = table.updateManyIfUnchangedSQL
      binds = PostgresBindings(capacity: 2 * table.kinds.count)
      for source in [expected, rows] {
        for (index, kind) in table.kinds.enumerated() {
          binds.append(PostgresArrayParameter(values: source.map { $0[index] }, kind: kind))
        }
      }
    }
    let updated = try await query(sql, binds)
    if updated.count == rows.count {
      log?.withLock { log in
        for row in rows { log.stored(row, in: schema, existed: true) }
      }
      return ChangeSummary(updated: rows.count)
    }
    // Removed or changed since they were read: the error names which.
    try precondition.verify(try await selected(precondition.query), store: store)
    // Changed and changed back in between: still a conflict, as the rows were written meanwhile.
    throw ChangeSet.Precondition.conflict(entity: schema.name, id: nil, store: store, what: "changed")
  }
}

extension PostgresTable {
  /// The most rows a write-back of `PostgresApplier.applyIfRowsUnchanged()` binds value by
  /// value (``updateFewIfUnchangedSQL``); a larger one binds an array per column.
  static let fewRows = 8

  /// The statement of `PostgresApplier.applyIfRowsUnchanged()` for a table: the rows as read,
  /// then the rows as they will be stored; returns the ids updated.
  ///
  /// With `rows` `nil`, each part is bound as one array per column (`$1`…, then `$n+1`…). With
  /// a number of rows, each value is a parameter of its own, row after row (the first row read
  /// `$1`…`$n`, the next `$n+1`…, then the rows to store), in `VALUES` lists of that many rows.
  /// The server plans a prepared statement for its parameters at each of its first five runs,
  /// then keeps a generic plan when that is estimated to cost no more: with arrays it is not
  /// (the generic plan guesses ten elements and a sequential scan), so every run was planned
  /// again, which took more than half of the statement's time on the server (0.11 ms of 0.18
  /// for two rows); with `VALUES` the generic plan knows the row count and looks the rows up by
  /// the primary key, and the server plans the statement no more.
  static func updateManyIfUnchangedSQL(
    _ table: String, _ columns: [String], _ kinds: [FieldKind], id idPosition: Int, rows: Int? = nil
  ) -> String {
    let id = columns[idPosition]
    let width = columns.count
    let names = columns.indices.map { "\"\($0)\"" }
    /// The rows as read (`part` 0) or as they will be stored (1), as a source of rows.
    func source(_ part: Int) -> String {
      guard let rows else {
        let arrays = kinds.enumerated().map {
          "$\(part * width + $0.offset + 1)::\(PostgresValues.arrayCast($0.element))"
        }
        return "unnest(\(arrays.joined(separator: ", ")))"
      }
      let tuples = (0..<rows).map { row in
        let values = kinds.enumerated().map {
          "$\((part * rows + row) * width + $0.offset + 1)::\(valueCast($0.element))"
        }
        return "(\(values.joined(separator: ", ")))"
      }
      return "(VALUES \(tuples.joined(separator: ", ")))"
    }
    let lockedIDs =
      rows.map { rows in
        "IN (\((0..<rows).map { "$\($0 * width + idPosition + 1)" }.joined(separator: ", ")))"
      }
      ?? "= ANY($\(idPosition + 1))"
    let count = rows.map(String.init) ?? "cardinality($\(idPosition + 1))"
    let others = columns.indices.filter { $0 != idPosition }
    let same =
      ["\"locked\".\(id) = \"read\".\(names[idPosition])"]
      + others.map { index in
        kinds[index] == .double
          ? "float8send(\"locked\".\(columns[index])) IS NOT DISTINCT FROM float8send(\"read\".\(names[index]))"
          : "\"locked\".\(columns[index]) IS NOT DISTINCT FROM \"read\".\(names[index])"
      }
    let assignments = others.map { "\(columns[$0]) = \"rows\".\(names[$0])" }
    return
      "WITH \"locked\" AS MATERIALIZED (SELECT \(columns.joined(separator: ", ")) FROM \(table) "
      + "WHERE \(id) \(lockedIDs) ORDER BY \(id) FOR UPDATE), "
      + "\"unchanged\" AS (SELECT count(*) AS \"count\" FROM \"locked\" JOIN \(source(0)) "
      + "AS \"read\"(\(names.joined(separator: ", "))) ON \(same.joined(separator: " AND "))) "
      + "UPDATE \(table) SET "
      + (assignments.isEmpty ? "\(id) = \(table).\(id)" : assignments.joined(separator: ", "))
      + " FROM \(source(1)) AS \"rows\"(\(names.joined(separator: ", "))), \"unchanged\" "
      + "WHERE \(table).\(id) = \"rows\".\(names[idPosition]) "
      + "AND \"unchanged\".\"count\" = \(count) RETURNING \(table).\(id)"
  }

  /// The type a parameter of a kind is cast to in a `VALUES` list (the column's, without its
  /// collation).
  private static func valueCast(_ kind: FieldKind) -> String {
    switch kind {
    case .string, .document: "text"
    default: PostgresValues.columnType(kind)
    }
  }
}
