@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import PostgresNIO

/// The ``Coffer/SchemaEditor`` of a PostgreSQL store: runs on the thread of a migration step's
/// body, sending each statement on the step's connection, inside its transaction, through a
/// ``PostgresEditLink`` that blocks the thread until the server answers.
///
/// The catalog is read once and kept up to date with what the editor changes. Every table it
/// creates, drops or renames has the statement texts that name it retired at once (see
/// ``PostgresStatements/retire(mentioning:)``), so that no statement prepared for the table
/// before runs against the new one.
///
/// Staged rows (``stage(_:into:)``, which the core's rewrites use) are kept and sent together,
/// up to ``PostgresApplier/rowsPerInsert`` of one entity in one `unnest` statement behind a
/// savepoint, before any other statement of the editor, at ``flushInserts()`` and when the body
/// ends (``finish()``): a step that rewrites an entity sends one statement per 4,096 rows, not
/// one round trip (and one wait of the body's thread) per row. When such a statement breaks a
/// unique index or repeats an id, it is rolled back to its savepoint and its rows go again one
/// at a time, so that the error names the first row that clashes, as when each row went alone.
/// ``insert(_:into:)`` still sends its row at once: a body may catch its error and go on.
///
/// Used only by the body, on its thread: no lock.
final class PostgresSchemaEditor: SchemaEditor {
  let backend: PostgresBackend
  let connection: PostgresConnection
  let link: PostgresEditLink
  let ledger: PostgresEditLedger
  /// The catalog as this transaction left it, read at first use.
  private var records: [String: PostgresCatalog.Record]?
  /// The tables of the entities worked with, by name.
  private var tables: [String: PostgresTable] = [:]
  /// Cursors opened so far: each scan names its own.
  private var cursors = 0
  /// Whether the body is still running: the editor refuses to work after it returned.
  var isOpen = true
  /// Rows staged and not sent yet, all of one entity, in the order they were staged.
  private var pending: (table: PostgresTable, rows: [Row])?

  /// Rows a scan fetches at a time.
  static let rowsPerFetch = 1000

  init(
    backend: PostgresBackend, connection: PostgresConnection, link: PostgresEditLink,
    ledger: PostgresEditLedger
  ) {
    self.backend = backend
    self.connection = connection
    self.link = link
    self.ledger = ledger
  }

  private var store: String { backend.name }

  func schemas() throws -> [EntitySchema] {
    try catalogRecords().values.map(\.schema).sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
  }

  func scan(_ entity: String, _ visit: (any StoredFields) throws -> Void) throws {
    let table = try table(entity)
    try flush()
    cursors += 1
    let cursor = SQLIdentifier.quoted("coffer_scan_\(cursors)")
    let action = "reading \(entity)"
    try link.wait(while: action, entity: entity) { [backend, connection] in
      try await backend.run(
        "DECLARE \(cursor) NO SCROLL CURSOR FOR SELECT \(table.selectList) FROM \(table.table)",
        on: connection)
    }
    let fields = PostgresFields(kinds: table.kinds)
    while true {
      let rows = try link.wait(while: action, entity: entity) { [backend, connection] in
        try await backend.run("FETCH FORWARD \(Self.rowsPerFetch) FROM \(cursor)", on: connection)
      }
      for row in rows {
        try fields.load(row)
        do {
          try visit(fields)
        } catch {
          // Rows inserted before this one was read come first: their clash is the error.
          try flush()
          throw error
        }
      }
      if rows.count < Self.rowsPerFetch { break }
    }
    try link.wait(while: action, entity: entity) { [backend, connection] in
      try await backend.run("CLOSE \(cursor)", on: connection)
    }
  }

  func create(_ schema: EntitySchema) throws {
    if try catalogRecords()[schema.name] != nil {
      throw CofferError.entityAlreadyStored(schema.name, store: store)
    }
    try flush()
    let table = try link.wait(while: "creating \(schema.name)", entity: schema.name) {
      [backend, connection] in
      try await backend.ensureCatalog(on: connection)
      return try await backend.createEntity(schema, on: connection)
    }
    remember(table)
  }

  func insert(_ row: Row, into entity: String) throws {
    let table = try checked(row, into: entity)
    try flush()
    try insertOne(row, into: table)
  }

  func stage(_ row: Row, into entity: String) throws {
    let table = try checked(row, into: entity)
    if let pending, pending.table !== table { try flush() }
    if pending == nil { pending = (table, []) }
    pending?.rows.append(row)
    if let count = pending?.rows.count, count >= PostgresApplier.rowsPerInsert { try flush() }
  }

  /// The table of an entity, after checking that a row has as many values as it has columns.
  private func checked(_ row: Row, into entity: String) throws -> PostgresTable {
    let table = try table(entity)
    try table.checkWidth(of: row, into: entity, store: store)
    return table
  }

  /// Sends the rows staged and not sent yet, if any.
  func flush() throws {
    guard let (table, rows) = pending else { return }
    pending = nil
    if rows.count == 1 {
      try insertOne(rows[0], into: table)
      return
    }
    let entity = table.schema.name
    let inserted = try link.wait(while: "inserting into \(entity)", entity: entity) { [backend, connection] in
      var binds = PostgresBindings(capacity: table.kinds.count)
      for (index, kind) in table.kinds.enumerated() {
        binds.append(PostgresArrayParameter(values: rows.map { $0[index] }, kind: kind))
      }
      try await backend.run("SAVEPOINT coffer_rows", on: connection)
      do {
        _ = try await PostgresStatements.rows(table.insertManySQL, binds, on: connection, logger: .disabled)
      } catch  where PostgresFailure.sqlState(of: error) == "23505" && !connection.isClosed {
        try await backend.run("ROLLBACK TO SAVEPOINT coffer_rows", on: connection)
        return false
      }
      try await backend.run("RELEASE SAVEPOINT coffer_rows", on: connection)
      return true
    }
    if inserted { return }
    for row in rows { try insertOne(row, into: table) }
  }

  func flushInserts() throws {
    try flush()
  }

  /// Sends everything the body left unsent: call it when the body returns, before committing.
  func finish() throws {
    try flush()
  }

  /// Inserts one row; explains a unique clash or a repeated id as every backend names it.
  private func insertOne(_ row: Row, into table: PostgresTable) throws {
    let entity = table.schema.name
    let action = "inserting into \(entity)"
    // A conflict inserts nothing and leaves the transaction usable, so the row can be explained.
    let inserted = try link.wait(while: action, entity: entity) { [connection] in
      var binds = PostgresBindings(capacity: table.kinds.count)
      for (index, value) in row.values.enumerated() { binds.append(value, as: table.kinds[index]) }
      let rows = try await PostgresStatements.rows(
        table.byID.insert + " ON CONFLICT DO NOTHING RETURNING 1", binds, on: connection, logger: .disabled)
      return !rows.isEmpty
    }
    if inserted { return }
    throw try link.wait(while: action, entity: entity) { [connection, store] in
      let applier = PostgresApplier(
        connection: connection, tables: [entity: table], changes: ChangeSet(), store: store)
      return try await applier.explain(row, in: table, inserting: true)
    }
  }

  /// One `INSERT … SELECT` on the server, for the conversions whose result PostgreSQL's casts
  /// give exactly as ``Coffer/FieldConversion`` does: a `bigint` as decimal text and a
  /// `boolean` as 0 or 1. Any other conversion is left to the rows' pass through the step.
  func copyRows(
    from source: String, into target: String, converting conversions: [Int: FieldConversion.BuiltIn]
  ) throws -> Int? {
    let from = try table(source)
    let into = try table(target)
    try flush()
    let list = InEngineCopy.selectList(
      columns: from.columns, from: from.kinds, to: into.kinds, converting: conversions
    ) { conversion, column in
      switch conversion {
      case .intToString: "\(column)::text"
      case .boolToInt: "\(column)::integer"
      default: nil
      }
    }
    guard let expressions = list else { return nil }
    let sql =
      "INSERT INTO \(into.table) (\(into.selectList)) SELECT \(expressions.joined(separator: ", ")) FROM \(from.table)"
    return try link.wait(while: "copying \(source)", entity: source) { [connection] in
      try await connection.sendCountingRows(PostgresQuery(unsafeSQL: sql))
    }
  }

  func drop(_ entity: String) throws {
    let table = try table(entity)
    try flush()
    try link.wait(while: "dropping \(entity)", entity: entity) { [backend, connection] in
      try await backend.run("DROP TABLE \(table.table)", on: connection)
      try await backend.catalog.delete(entity, on: connection)
    }
    forget(table)
  }

  func relabel(_ entity: String, as schema: EntitySchema) throws {
    let old = try table(entity)
    try flush()
    try old.schema.checkRelabel(as: schema, store: store)
    if schema.name != entity, try catalogRecords()[schema.name] != nil {
      throw CofferError.entityAlreadyStored(schema.name, store: store)
    }
    let new = try link.wait(while: "relabeling \(entity)", entity: entity) { [backend, connection] in
      try await backend.relabel(old, as: schema, moving: false, on: connection)
    }
    forget(old)
    remember(new)
  }

  func migrations() throws -> [MigrationRecord] {
    try flush()
    if try catalogRecords().values.contains(where: { $0.tableName == PostgresMigrationLog.tableName }) {
      return []
    }
    return try link.wait(while: "reading the migration log") { [backend, connection] in
      try await PostgresMigrationLog(catalog: backend.catalog).records(on: connection)
    }
  }

  func record(_ migration: MigrationRecord) throws {
    try flush()
    let owner = try catalogRecords().values.first { $0.tableName == PostgresMigrationLog.tableName }
    if let owner {
      // An entity made before Coffer kept the name has the log's table: it moves aside.
      let old = try table(owner.schema.name)
      let new = try link.wait(while: "moving \(owner.schema.name)", entity: owner.schema.name) {
        [backend, connection] in
        try await backend.relabel(old, as: old.schema, moving: true, on: connection)
      }
      forget(old)
      remember(new)
    }
    try link.wait(while: "recording a migration step") { [backend, connection] in
      try await backend.ensureCatalog(on: connection)
      try await PostgresMigrationLog(catalog: backend.catalog).append(migration, on: connection)
    }
  }

  // MARK: - Catalog

  /// The catalog's records as this transaction left them.
  private func catalogRecords() throws -> [String: PostgresCatalog.Record] {
    guard isOpen else {
      throw CofferError(
        .closed,
        "A schema editor was used after its migration step ended; use it only inside the step's body.",
        store: store)
    }
    if let records { return records }
    let read = try link.wait(while: "reading the catalog") { [backend, connection] in
      guard try await backend.catalog.exists(on: connection) else {
        return [String: PostgresCatalog.Record]()
      }
      return try await backend.catalog.records(on: connection)
    }
    records = read
    return read
  }

  /// The table of a stored entity, as this transaction left it.
  private func table(_ entity: String) throws -> PostgresTable {
    let records = try catalogRecords()
    if let table = tables[entity] { return table }
    guard let record = records[entity] else {
      throw CofferError(
        .unknownEntity, "The store has no entity '\(entity)' to migrate. Check the step's entity name.",
        store: store, entity: entity)
    }
    let table = PostgresTable(
      schema: record.schema, namespace: backend.configuration.schema, tableName: record.tableName,
      columnNames: record.columns)
    tables[entity] = table
    return table
  }

  private func remember(_ table: PostgresTable) {
    let entity = table.schema.name
    records?[entity] = PostgresCatalog.Record(
      schema: table.schema, tableName: table.tableName, columns: table.columnNames)
    tables[entity] = table
    ledger.changed(entity, to: table)
  }

  private func forget(_ table: PostgresTable) {
    let entity = table.schema.name
    records?[entity] = nil
    tables[entity] = nil
    ledger.changed(entity, to: table, removed: true)
  }

}

extension PostgresSchemaEditor: ChangeRecordingEditor {
  func recordsChanges() throws -> Bool {
    try link.wait(while: "reading whether the store records a change feed") { [backend, connection] in
      try await backend.changeFeedIsOn(on: connection)
    }
  }

  /// Records the step's rows as the next batch of the feed: the step transaction's last
  /// statement before `COMMIT`, numbered under the feed's lock as a batch is.
  func recordChanges(_ changes: ChangeCollector) throws {
    try flush()
    _ = try link.wait(while: "recording a migration step in the change feed") { [backend, connection] in
      try await backend.feed.record(changes, on: connection) != nil
    }
  }
}
