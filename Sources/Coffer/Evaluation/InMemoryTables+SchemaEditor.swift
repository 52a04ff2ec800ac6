extension InMemoryTables {
  /// Runs `body` with a ``SchemaEditor`` over a copy of these tables and keeps the copy when
  /// it returns: all of the edit, or (when it throws) none of it. What the memory and
  /// property-list backends' ``SchemaEditing/editSchema(_:)`` do under their lock, and how
  /// ``Store/rehearseMigration(_:)`` runs a plan on a copy of a store.
  ///
  /// - Returns: what `body` returned, and whether it changed anything (an edit that only read
  ///   the schemas or the record of migrations changes nothing, so a file need not be written).
  public mutating func edit<R>(_ body: (any SchemaEditor) throws -> R) throws -> (result: R, changed: Bool) {
    let edit = try edit(recordingChanges: false, body)
    return (edit.result, edit.changed)
  }

  /// ``edit(_:)`` for a backend that records a change feed: when `recording`, the editor says
  /// so to a migration step, and the rows the step changed come back, for the backend to record
  /// as it keeps the tables (`nil` when nothing is to be recorded).
  public mutating func edit<R>(recordingChanges recording: Bool, _ body: (any SchemaEditor) throws -> R)
    throws
    -> (result: R, changed: Bool, changes: ChangeCollector?)
  {
    let editor = InMemorySchemaEditor(self)
    editor.recording = recording
    let result = try body(editor)
    if editor.changed { self = editor.tables }
    return (result, editor.changed, editor.recorded)
  }
}

/// A ``SchemaEditor`` over ``InMemoryTables``: edits a copy, kept only when the edit succeeds.
final class InMemorySchemaEditor: ChangeRecordingEditor {
  var tables: InMemoryTables
  /// Whether anything was created, inserted, dropped, relabelled or recorded.
  private(set) var changed = false
  /// Whether the store records a change feed.
  var recording = false
  /// The row changes a step handed over for the feed.
  private(set) var recorded: ChangeCollector?

  init(_ tables: InMemoryTables) { self.tables = tables }

  func schemas() throws -> [EntitySchema] {
    tables.tables.values.map(\.schema).sorted { $0.name < $1.name }
  }

  func scan(_ entity: String, _ visit: (any StoredFields) throws -> Void) throws {
    let table = try stored(entity)
    let fields = RowFields(Row([]))
    for row in table.rows.values {
      fields.current = row
      try visit(fields)
    }
  }

  func create(_ schema: EntitySchema) throws {
    guard tables.tables[schema.name] == nil else {
      throw CofferError.entityAlreadyStored(schema.name, store: tables.storeName)
    }
    tables.tables[schema.name] = InMemoryTable(schema: schema)
    changed = true
  }

  func insert(_ row: Row, into entity: String) throws {
    try tables.insert(row, into: entity)
    changed = true
  }

  func drop(_ entity: String) throws {
    _ = try stored(entity)
    tables.tables[entity] = nil
    changed = true
  }

  func relabel(_ entity: String, as schema: EntitySchema) throws {
    var table = try stored(entity)
    try table.schema.checkRelabel(as: schema, store: tables.storeName)
    if schema.name != entity, tables.tables[schema.name] != nil {
      throw CofferError.entityAlreadyStored(schema.name, store: tables.storeName)
    }
    table.schema = schema
    tables.tables[entity] = nil
    tables.tables[schema.name] = table
    changed = true
  }

  func migrations() throws -> [MigrationRecord] { tables.migrations }

  func recordsChanges() throws -> Bool { recording }

  func recordChanges(_ changes: ChangeCollector) throws {
    guard recording else { return }
    recorded = changes
    changed = true
  }

  func record(_ migration: MigrationRecord) throws {
    tables.migrations.append(migration)
    changed = true
  }

  private func stored(_ entity: String) throws -> InMemoryTable {
    guard let table = tables.tables[entity] else {
      throw CofferError(
        .unknownEntity, "The store has no entity '\(entity)'.", store: tables.storeName, entity: entity)
    }
    return table
  }
}
