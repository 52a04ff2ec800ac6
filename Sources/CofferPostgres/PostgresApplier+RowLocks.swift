@_spi(Backend) import Coffer
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
    var binds = PostgresBindings(capacity: 2 * table.kinds.count)
    for source in [expected, rows] {
      for (index, kind) in table.kinds.enumerated() {
        binds.append(PostgresArrayParameter(values: source.map { $0[index] }, kind: kind))
      }
    }
    let updated = try await query(table.updateManyIfUnchangedSQL, binds)
    if updated.count == rows.count { return ChangeSummary(updated: rows.count) }
    // Removed or changed since they were read: the error names which.
    try precondition.verify(try await selected(precondition.query), store: store)
    // Changed and changed back in between: still a conflict, as the rows were written meanwhile.
    throw ChangeSet.Precondition.conflict(entity: schema.name, id: nil, store: store, what: "changed")
  }
}

extension PostgresTable {
  /// The statement of `PostgresApplier.applyIfRowsUnchanged()` for a table: the rows as read
  /// bound as one array per column (`$1`…), then the rows as they will be stored (`$n+1`…);
  /// returns the ids updated.
  static func updateManyIfUnchangedSQL(
    _ table: String, _ columns: [String], _ kinds: [FieldKind], id idPosition: Int
  ) -> String {
    let id = columns[idPosition]
    let names = columns.indices.map { "\"\($0)\"" }
    func unnest(after: Int) -> String {
      let arrays = kinds.enumerated().map {
        "$\(after + $0.offset + 1)::\(PostgresValues.arrayCast($0.element))"
      }
      return "unnest(\(arrays.joined(separator: ", ")))"
    }
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
      + "WHERE \(id) = ANY($\(idPosition + 1)) ORDER BY \(id) FOR UPDATE), "
      + "\"unchanged\" AS (SELECT count(*) AS \"count\" FROM \"locked\" JOIN \(unnest(after: 0)) "
      + "AS \"read\"(\(names.joined(separator: ", "))) ON \(same.joined(separator: " AND "))) "
      + "UPDATE \(table) SET "
      + (assignments.isEmpty ? "\(id) = \(table).\(id)" : assignments.joined(separator: ", "))
      + " FROM \(unnest(after: columns.count)) AS \"rows\"(\(names.joined(separator: ", "))), \"unchanged\" "
      + "WHERE \(table).\(id) = \"rows\".\(names[idPosition]) "
      + "AND \"unchanged\".\"count\" = cardinality($\(idPosition + 1)) RETURNING \(table).\(id)"
  }
}
