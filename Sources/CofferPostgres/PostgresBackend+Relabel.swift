@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

extension PostgresBackend {
  /// Gives an entity's table the names of `schema` (which differs from the stored one only in
  /// names) and records it: the table takes the entity's new name, renamed fields' columns
  /// take theirs, and the indexes and primary key named after them follow. Each rename is a
  /// change to PostgreSQL's catalogs; no row is read or written.
  ///
  /// - Parameter moving: give the table a new name even if the entity keeps its own (for an
  ///   entity whose table has a name Coffer now keeps for itself).
  func relabel(_ old: PostgresTable, as schema: EntitySchema, moving: Bool, on connection: PostgresConnection)
    async throws -> PostgresTable
  {
    let namespace = catalog.namespace
    var taken = try await catalog.takenNames(on: connection)
    var tableName = old.tableName
    if schema.name != old.schema.name || moving {
      if !moving { taken.remove(old.tableName) }
      tableName = PostgresIdentifier.fresh(for: schema.name, avoiding: taken)
    }
    // Renamed fields' columns get the new names, avoiding the table's other columns (those of
    // fields no longer declared included).
    var columns = old.columnNames
    let renamed = schema.fields.indices.filter { schema.fields[$0].name != old.schema.fields[$0].name }
    let physical = Set(try await catalog.columnTypes(of: old.tableName, on: connection).keys)
    var others = physical
    for position in renamed { others.remove(old.columnNames[position]) }
    for position in renamed {
      columns[position] = PostgresIdentifier.fresh(for: schema.fields[position].name, avoiding: others)
      others.insert(columns[position])
    }
    let new = PostgresTable(
      schema: schema, namespace: configuration.schema, tableName: tableName, columnNames: columns)

    if tableName != old.tableName {
      if let key = try await primaryKeyName(of: old, on: connection) {
        taken.remove(key)
        let wanted = PostgresIdentifier.fresh(for: tableName + "#id", avoiding: taken.union([tableName]))
        if wanted != key {
          try await run(
            "ALTER TABLE \(old.table) RENAME CONSTRAINT \(SQLIdentifier.quoted(key)) TO "
              + SQLIdentifier.quoted(wanted), on: connection)
        }
      }
      try await run(
        "ALTER TABLE \(old.table) RENAME TO \(SQLIdentifier.quoted(tableName))", on: connection)
    }
    try await rename(
      zip(old.columnNames, columns).filter { $0 != $1 }, among: physical,
      on: connection
    ) { from, to in
      "ALTER TABLE \(new.table) RENAME COLUMN \(SQLIdentifier.quoted(from)) TO \(SQLIdentifier.quoted(to))"
    }
    let indexes = zip(old.schema.orderedIndexes, schema.orderedIndexes).map {
      (indexName(old, $0), indexName(new, $1))
    }
    try await rename(
      indexes.filter { $0 != $1 }, among: try await catalog.indexNames(on: connection), on: connection
    ) { from, to in
      "ALTER INDEX \(namespace).\(SQLIdentifier.quoted(from)) RENAME TO \(SQLIdentifier.quoted(to))"
    }
    if schema.name != old.schema.name { try await catalog.delete(old.schema.name, on: connection) }
    try await catalog.write(.init(schema: schema, tableName: tableName, columns: columns), on: connection)
    logger.info(
      "Relabeled an entity",
      metadata: [
        "coffer.entity": .string(old.schema.name), "coffer.newEntity": .string(schema.name),
        "coffer.table": .string(tableName), "coffer.renamedColumns": .stringConvertible(renamed.count),
      ])
    return new
  }

  /// The name of a table's primary key constraint, if it has one.
  private func primaryKeyName(of table: PostgresTable, on connection: PostgresConnection) async throws
    -> String?
  {
    var binds = PostgresBindings()
    binds.append(.string(table.table), as: .string)
    let rows = try await run(
      "SELECT conname::text FROM pg_catalog.pg_constraint WHERE conrelid = to_regclass($1) AND contype = 'p'",
      binds, on: connection)
    guard let cell = rows.first?.first(where: { _ in true }),
      case .string(let name) = try PostgresValues.read(cell.bytes, as: .string)
    else { return nil }
    return name
  }

  /// Renames objects from the first names to the second, with `present` the names in use
  /// beside them. One whose new name is still in use goes round a free name first.
  private func rename(
    _ renames: [(String, String)], among present: Set<String>, on connection: PostgresConnection,
    _ sql: (String, String) -> String
  ) async throws {
    if renames.isEmpty { return }
    var present = present
    var pending: [(from: String, to: String)] = []
    for (from, to) in renames {
      guard present.contains(to) else {
        pending.append((from, to))
        continue
      }
      let detour = PostgresIdentifier.fresh(for: "coffer_relabel", avoiding: present.union(renames.map(\.1)))
      try await run(sql(from, detour), on: connection)
      present.remove(from)
      present.insert(detour)
      pending.append((detour, to))
    }
    while let next = pending.firstIndex(where: { !present.contains($0.to) }) {
      try await run(sql(pending[next].from, pending[next].to), on: connection)
      present.remove(pending[next].from)
      present.insert(pending[next].to)
      pending.remove(at: next)
    }
    guard pending.isEmpty else {
      throw CofferError(
        .backendFailure, "Coffer could not rename a table's columns or indexes: their new names are taken.",
        store: name)
    }
  }
}
