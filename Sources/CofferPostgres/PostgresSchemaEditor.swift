@_spi(Backend) import Coffer
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
    cursors += 1
    let cursor = PostgresIdentifier.quoted("coffer_scan_\(cursors)")
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
        try visit(fields)
      }
      if rows.count < Self.rowsPerFetch { break }
    }
    try link.wait(while: action, entity: entity) { [backend, connection] in
      try await backend.run("CLOSE \(cursor)", on: connection)
    }
  }

  func create(_ schema: EntitySchema) throws {
    if try catalogRecords()[schema.name] != nil { throw taken(schema.name) }
    let table = try link.wait(while: "creating \(schema.name)", entity: schema.name) {
      [backend, connection] in
      try await backend.ensureCatalog(on: connection)
      return try await backend.createEntity(schema, on: connection)
    }
    remember(table)
  }

  func insert(_ row: Row, into entity: String) throws {
    let table = try table(entity)
    guard row.count == table.kinds.count else {
      throw CofferError(
        .invalidValue,
        "A row of \(row.count) values cannot go into \(entity), which stores \(table.kinds.count) fields. Make "
          + "the row in the entity's stored schema.",
        store: store, entity: entity)
    }
    let action = "inserting into \(entity)"
    // A conflict inserts nothing and leaves the transaction usable, so the row can be explained.
    let inserted = try link.wait(while: action, entity: entity) { [connection] in
      var binds = PostgresBindings(capacity: table.kinds.count)
      for (index, value) in row.values.enumerated() { binds.append(value, as: table.kinds[index]) }
      let rows = try await PostgresStatements.rows(
        table.insertSQL + " ON CONFLICT DO NOTHING RETURNING 1", binds, on: connection, logger: .disabled)
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
    try link.wait(while: "dropping \(entity)", entity: entity) { [backend, connection] in
      try await backend.run("DROP TABLE \(table.table)", on: connection)
      try await backend.catalog.delete(entity, on: connection)
    }
    forget(table)
  }

  func relabel(_ entity: String, as schema: EntitySchema) throws {
    let old = try table(entity)
    try old.schema.checkRelabel(as: schema, store: store)
    if schema.name != entity, try catalogRecords()[schema.name] != nil { throw taken(schema.name) }
    let new = try link.wait(while: "relabeling \(entity)", entity: entity) { [backend, connection] in
      try await backend.relabel(old, as: schema, moving: false, on: connection)
    }
    forget(old)
    remember(new)
  }

  func migrations() throws -> [MigrationRecord] {
    if try catalogRecords().values.contains(where: { $0.tableName == PostgresMigrationLog.tableName }) {
      return []
    }
    return try link.wait(while: "reading the migration log") { [backend, connection] in
      try await PostgresMigrationLog(catalog: backend.catalog).records(on: connection)
    }
  }

  func record(_ migration: MigrationRecord) throws {
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

  private func taken(_ entity: String) -> CofferError {
    CofferError(
      .invalidSchema,
      "The store already has an entity '\(entity)'. Drop or relabel it first, or choose another name.",
      store: store, entity: entity)
  }
}
