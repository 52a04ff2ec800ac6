import CSQLite
@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import Logging

/// The ``Coffer/SchemaEditor`` of a SQLite store: works on the writer connection, inside the
/// `BEGIN IMMEDIATE` transaction ``SQLiteBackend/editSchema(_:)`` runs its body in.
///
/// Entities are read from the `coffer_schema` table as the transaction left it, so every
/// primitive sees what the ones before it did. Each table the editor works on gets a serial of
/// its own (unless it is the very table the backend published), so that no connection reuses a
/// statement compiled for a table of the same name with other columns.
///
/// Used only by the body, on the thread that holds the writer: no lock.
final class SQLiteSchemaEditor: SchemaEditor {
  let backend: SQLiteBackend
  let connection: SQLiteConnection
  /// The tables the editor worked with, by entity; an entry is dropped when its entity changes.
  private var tables: [String: SQLiteTable] = [:]
  /// The entities created, dropped or relabeled (old and new names): what the backend publishes
  /// again after the commit.
  private(set) var changed: Set<String> = []
  /// Inserts rows, with the statements of the entity it inserted into last; rebuilt when
  /// ``tables`` changes.
  private var applier: SQLiteApplier?
  /// Whether the body is still running: the editor refuses to work after it returned.
  var isOpen = true
  /// Whether the catalog table is known to exist.
  private var hasCatalog = false
  /// Whether the log of migrations is known to exist: a transaction before found or made it,
  /// ``migrations()`` found it, or ``record(_:)`` made it.
  private(set) var hasLog: Bool
  /// The entities created in this transaction whose indexes that are not unique are made at
  /// its end (``finish()``), once their rows are in: SQLite then builds each index from sorted
  /// keys, where inserting into it row by row would cost a b-tree search per row. Unique
  /// indexes are made at once, so that a row that breaks one fails as it is inserted.
  private var deferredIndexes: Set<String> = []

  init(backend: SQLiteBackend, connection: SQLiteConnection) {
    self.backend = backend
    self.connection = connection
    self.hasLog = backend.catalog.withLock { $0.hasMigrationLog }
  }

  private var store: String { backend.name }

  /// The tables of the changed entities that still exist, to publish after the commit.
  var changedTables: [String: SQLiteTable] { tables.filter { changed.contains($0.key) } }

  func schemas() throws -> [EntitySchema] {
    try checkOpen()
    guard try catalogExists() else { return [] }
    return try SQLiteCatalog.recordedSchemas(on: connection).sorted {
      $0.name.utf8.lexicographicallyPrecedes($1.name.utf8)
    }
  }

  func scan(_ entity: String, _ visit: (any StoredFields) throws -> Void) throws {
    let table = try table(entity)
    // A statement of its own, not the cache's: `visit` may scan or insert meanwhile.
    var compiled: OpaquePointer?
    let code = sqlite3_prepare_v3(
      connection.handle, "SELECT \(table.selectList) FROM \(table.table)", -1, 0, &compiled, nil)
    guard code == SQLITE_OK, let compiled else { throw connection.failure(code, while: "reading \(entity)") }
    let statement = SQLiteStatement(compiled, connection: connection)
    defer { statement.finalize() }
    let fields = SQLiteFields(statement: statement, kinds: table.kinds)
    while try statement.stepReading() { try visit(fields) }
  }

  func create(_ schema: EntitySchema) throws {
    try checkOpen()
    if try stored(schema.name) != nil { throw CofferError.entityAlreadyStored(schema.name, store: store) }
    try SQLiteCatalog.create(on: connection)
    hasCatalog = true
    let table = try backend.createEntity(schema, on: connection, deferringPlainIndexes: true)
    remember(table.numbered(backend.nextSerial()), for: schema.name)
    if schema.indexes.contains(where: { !$0.isUnique }) { deferredIndexes.insert(schema.name) }
  }

  /// Makes the indexes ``create(_:)`` left for the end; called once the body has returned,
  /// inside its transaction.
  func finish() throws {
    for entity in deferredIndexes.sorted() {
      guard let table = tables[entity] else { continue }
      try backend.syncIndexes(of: table, on: connection)
    }
    deferredIndexes = []
  }

  func insert(_ row: Row, into entity: String) throws {
    let table = try table(entity)
    try table.checkWidth(of: row, into: entity, store: store)
    let applier =
      applier ?? SQLiteApplier(connection: connection, tables: tables, layouts: [:], store: store)
    self.applier = applier
    try applier.insert(row, into: applier.resolve(entity))
  }

  /// One `INSERT … SELECT`: the values of the fields not converted go over as SQLite stores
  /// them, and the conversions SQLite does exactly as Swift does are SQL expressions — an
  /// integer's decimal text is `CAST(… AS TEXT)`, and a Boolean is already the integer 0 or 1.
  /// Any other conversion leaves the copy to the caller.
  func copyRows(
    from source: String, into target: String, converting conversions: [Int: FieldConversion.BuiltIn]
  )
    throws -> Int?
  {
    let from = try table(source)
    let into = try table(target)
    let list = InEngineCopy.selectList(
      columns: from.columns, from: from.kinds, to: into.kinds, converting: conversions
    ) { conversion, column in
      switch conversion {
      case .intToString: "CAST(\(column) AS TEXT)"
      case .boolToInt: column
      default: nil
      }
    }
    guard let expressions = list else { return nil }
    try connection.execute(
      "INSERT INTO \(into.table) (\(into.selectList)) SELECT \(expressions.joined(separator: ", ")) FROM \(from.table)"
    )
    return connection.changes
  }

  func drop(_ entity: String) throws {
    let table = try table(entity)
    try SQLiteTextIndex.dropAll(on: table.tableName, connection)
    try connection.execute("DROP TABLE \(table.table)")
    try SQLiteCatalog.delete(entity, on: connection)
    deferredIndexes.remove(entity)
    forget(entity)
    backend.logger.info(
      "Dropped an entity's table",
      metadata: ["coffer.entity": .string(entity), "coffer.table": .string(table.tableName)])
  }

  func relabel(_ entity: String, as schema: EntitySchema) throws {
    let old = try table(entity)
    try old.schema.checkRelabel(as: schema, store: store)
    if schema.name != entity, try stored(schema.name) != nil {
      throw CofferError.entityAlreadyStored(schema.name, store: store)
    }
    var tableName = old.tableName
    if schema.name != entity {
      var names = try SQLiteCatalog.takenNames(on: connection)
      names.remove(SQLiteIdentifier.folded(old.tableName))
      tableName = SQLiteIdentifier.fresh(for: schema.name, avoiding: names)
    }
    // The columns of renamed fields get the new names, avoiding the table's other columns
    // (those of fields no longer declared included).
    var columns = old.columnNames
    let renamed = schema.fields.indices.filter { schema.fields[$0].name != old.schema.fields[$0].name }
    let physical = try SQLiteCatalog.columnNames(of: old.tableName, on: connection)
    var others = physical
    for position in renamed { others.remove(SQLiteIdentifier.folded(old.columnNames[position])) }
    for position in renamed {
      columns[position] = SQLiteIdentifier.fresh(for: schema.fields[position].name, avoiding: others)
      others.insert(SQLiteIdentifier.folded(columns[position]))
    }
    let new = SQLiteTable(
      schema: schema, tableName: tableName, columnNames: columns, serial: backend.nextSerial())
    try rename(old, to: new, columns: physical)
    // A text index named after the old table or column is rebuilt under the new names.
    try SQLiteTextIndex.sync(new, on: connection, creating: !deferredIndexes.contains(entity))
    if schema.name != entity { try SQLiteCatalog.delete(entity, on: connection) }
    try SQLiteCatalog.write(.init(schema: schema, tableName: tableName, columns: columns), on: connection)
    forget(entity)
    remember(new, for: schema.name)
    if deferredIndexes.remove(entity) != nil { deferredIndexes.insert(schema.name) }
    backend.logger.info(
      "Relabeled an entity",
      metadata: [
        "coffer.entity": .string(entity), "coffer.newEntity": .string(schema.name),
        "coffer.table": .string(tableName), "coffer.renamedColumns": .stringConvertible(renamed.count),
      ])
  }

  func migrations() throws -> [MigrationRecord] {
    try checkOpen()
    if hasLog { return try SQLiteMigrationLog.records(on: connection) }
    guard try SQLiteMigrationLog.exists(on: connection) else { return [] }
    hasLog = true
    return try SQLiteMigrationLog.records(on: connection)
  }

  func record(_ migration: MigrationRecord) throws {
    try checkOpen()
    if !hasLog {
      try makeLog()
      hasLog = true
    }
    try SQLiteMigrationLog.append(migration, on: connection)
  }

  /// Makes the log of migrations, first moving aside the table of an entity made before Coffer
  /// kept the log's name for itself.
  private func makeLog() throws {
    if let entity = try SQLiteMigrationLog.owner(on: connection) {
      // An entity made before Coffer kept the name has the log's table: it moves aside.
      let old = try table(entity)
      var names = try SQLiteCatalog.takenNames(on: connection)
      names.remove(SQLiteIdentifier.folded(old.tableName))
      let tableName = SQLiteIdentifier.fresh(for: entity, avoiding: names)
      let new = SQLiteTable(
        schema: old.schema, tableName: tableName, columnNames: old.columnNames, serial: backend.nextSerial())
      try rename(old, to: new, columns: [])
      try SQLiteTextIndex.sync(new, on: connection, creating: !deferredIndexes.contains(entity))
      try SQLiteCatalog.write(
        .init(schema: old.schema, tableName: tableName, columns: old.columnNames), on: connection)
      forget(entity)
      remember(new, for: entity)
    }
    try SQLiteMigrationLog.create(on: connection)
  }

  // MARK: - Tables

  /// The table of a stored entity, as the transaction left it.
  private func table(_ entity: String) throws -> SQLiteTable {
    try checkOpen()
    if let table = tables[entity] { return table }
    guard let record = try stored(entity) else {
      throw CofferError(
        .unknownEntity, "The store has no entity '\(entity)' to migrate. Check the step's entity name.",
        store: store, entity: entity)
    }
    // The table the backend published serves as it is, with the statements compiled for it.
    let published = backend.catalog.withLock { $0.tables[entity] }
    let table: SQLiteTable
    if let published, published.schema == record.schema, published.tableName == record.tableName,
      published.columnNames == record.columns
    {
      table = published
    } else {
      table = SQLiteTable(
        schema: record.schema, tableName: record.tableName, columnNames: record.columns,
        serial: backend.nextSerial())
    }
    tables[entity] = table
    applier = nil
    return table
  }

  /// The catalog's record of an entity; `nil` when there is none, or no catalog yet (a store
  /// never prepared).
  private func stored(_ entity: String) throws -> SQLiteCatalog.Record? {
    guard try catalogExists() else { return nil }
    return try SQLiteCatalog.read(entity, on: connection)
  }

  /// Whether the catalog table exists (a store never prepared has none).
  private func catalogExists() throws -> Bool {
    if !hasCatalog {
      let found = try connection.text(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [.string(SQLiteCatalog.tableName)])
      hasCatalog = found == "1"
    }
    return hasCatalog
  }

  private func remember(_ table: SQLiteTable, for entity: String) {
    tables[entity] = table
    changed.insert(entity)
    applier = nil
  }

  private func forget(_ entity: String) {
    tables[entity] = nil
    changed.insert(entity)
    applier = nil
  }

  /// Gives `old`'s table the name and columns of `new` (the same columns, renamed): the
  /// table and its columns are renamed in SQLite's schema, no row is touched. The indexes
  /// follow (SQLite rewrites their definitions) and keep their names, which may now hold the
  /// table's or a column's former name: Coffer finds them by what they cover (``SQLiteIndex``).
  /// `columns` are the table's columns, folded (those of fields no longer declared included).
  private func rename(_ old: SQLiteTable, to new: SQLiteTable, columns: Set<String>) throws {
    if new.tableName != old.tableName {
      var from = old.tableName
      if SQLiteIdentifier.folded(new.tableName) == SQLiteIdentifier.folded(old.tableName) {
        // SQLite takes a name that differs only in ASCII case for the table's own: go round.
        let names = try SQLiteCatalog.takenNames(on: connection)
        let detour = SQLiteIdentifier.fresh(for: "coffer_relabel", avoiding: names)
        try renameTable(from, to: detour)
        from = detour
      }
      try renameTable(from, to: new.tableName)
    }
    try renameColumns(
      of: new.tableName, columns: columns,
      zip(old.columnNames, new.columnNames).filter { !$0.utf8.elementsEqual($1.utf8) })
  }

  private func renameTable(_ from: String, to: String) throws {
    try connection.execute(
      "ALTER TABLE \(SQLIdentifier.quoted(from)) RENAME TO \(SQLIdentifier.quoted(to))")
  }

  /// Renames columns of a table, which has `columns` (folded), from the first names to the
  /// second. A column whose new name another column of the table still has goes round a free
  /// name first.
  private func renameColumns(of tableName: String, columns: Set<String>, _ renames: [(String, String)]) throws
  {
    if renames.isEmpty { return }
    let table = SQLIdentifier.quoted(tableName)
    var present = columns
    func rename(_ from: String, _ to: String) throws {
      try connection.execute(
        "ALTER TABLE \(table) RENAME COLUMN \(SQLIdentifier.quoted(from)) TO \(SQLIdentifier.quoted(to))"
      )
      present.remove(SQLiteIdentifier.folded(from))
      present.insert(SQLiteIdentifier.folded(to))
    }
    func blocked(_ from: String, _ to: String) -> Bool {
      let target = SQLiteIdentifier.folded(to)
      return present.contains(target) && target != SQLiteIdentifier.folded(from)
    }
    var pending: [(from: String, to: String)] = []
    for (from, to) in renames {
      guard blocked(from, to) else {
        pending.append((from, to))
        continue
      }
      let detour = SQLiteIdentifier.fresh(
        for: "coffer_relabel", avoiding: present.union(renames.map { SQLiteIdentifier.folded($0.1) }))
      try rename(from, detour)
      pending.append((detour, to))
    }
    while !pending.isEmpty {
      guard let next = pending.firstIndex(where: { !blocked($0.from, $0.to) }) else {
        throw CofferError(
          .backendFailure,
          "The columns of table '\(tableName)' could not be renamed: their new names are taken.",
          store: store)
      }
      try rename(pending[next].from, pending[next].to)
      pending.remove(at: next)
    }
  }

  // MARK: - Errors

  private func checkOpen() throws {
    guard isOpen else {
      throw CofferError(
        .closed,
        "A schema editor was used after its migration step ended; use it only inside the step's body.",
        store: store)
    }
  }

}

extension SQLiteSchemaEditor: ChangeRecordingEditor {
  func recordsChanges() throws -> Bool { try backend.feed.isOn(connection) }

  /// Records the step's rows as the next batch of the feed, in the step's transaction, under
  /// the writer lock.
  func recordChanges(_ changes: ChangeCollector) throws { try backend.feed.record(changes, on: connection) }
}
