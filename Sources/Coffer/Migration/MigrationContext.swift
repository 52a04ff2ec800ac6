/// What a migration step works with: the store's entities and rows inside the step's write
/// transaction. Everything done through it is applied together when the step ends, or not at
/// all when it throws.
///
/// Valid only while its step runs, on the thread that runs it; do not keep it.
public final class MigrationContext {
  let editor: any SchemaEditor
  let store: String?
  /// The step being run, for error messages.
  let step: String
  /// Rows read, written or removed so far.
  public private(set) var rowsTouched = 0
  /// The rows the step changed, for the change feed, when the store records one.
  var changes: ChangeCollector?

  init(editor: any SchemaEditor, store: String?, step: String) {
    self.editor = editor
    self.store = store
    self.step = step
  }

  /// Every stored entity with the schema its rows are stored in, sorted by name.
  public func schemas() throws -> [EntitySchema] { try editor.schemas() }

  /// The stored schema of an entity.
  ///
  /// - Throws: ``CofferError/Code/migrationFailed`` when the store has no such entity.
  public func schema(of entity: String) throws -> EntitySchema {
    guard let schema = try editor.schemas().first(where: { $0.name == entity }) else {
      throw failure(
        "the store has no entity '\(entity)'. Check the step's entity name against `coffer inspect`.",
        entity: entity)
    }
    return schema
  }

  /// Whether the store has an entity with this name.
  public func hasEntity(_ entity: String) throws -> Bool {
    try editor.schemas().contains { $0.name == entity }
  }

  /// Hands every record of an entity to `body`, in no particular order.
  public func forEachRecord(of entity: String, _ body: (DynamicRecord) throws -> Void) throws {
    let dynamic = try DynamicEntity(schema: schema(of: entity))
    try editor.scan(entity) { fields in
      rowsTouched += 1
      try body(DynamicRecord(dynamic, row: try Row(fields)))
    }
  }

  /// Every record of an entity, in no particular order.
  public func records(of entity: String) throws -> [DynamicRecord] {
    var records: [DynamicRecord] = []
    try forEachRecord(of: entity) { records.append($0) }
    return records
  }

  /// Replaces an entity's schema and rows in one pass: each stored record is handed to
  /// `transform`, and the record it returns (of an entity over `schema`) is stored instead;
  /// `nil` drops the row. `schema` may have another name: the entity is renamed.
  ///
  /// - Throws: ``CofferError/Code/migrationFailed`` naming the row's id when a record
  ///   returned does not fit `schema`, when two share an id or break a unique index, or when
  ///   `transform` throws (its error is the underlying error).
  public func rewrite(
    _ entity: String, as schema: EntitySchema, _ transform: (DynamicRecord) throws -> DynamicRecord?
  ) throws {
    let stored = try self.schema(of: entity)
    let input = try DynamicEntity(schema: stored)
    try rewriteRows(entity, as: schema) { row in
      let record = DynamicRecord(input, row: row)
      guard let result = try transform(record) else { return nil }
      guard result.entity.schema.fields == schema.fields else {
        throw failure(
          "the record returned for \(entity) id \(row[stored.idPosition]) is not of the new schema; make it with "
            + "DynamicEntity(schema:) of the schema passed to rewrite.", entity: entity,
          id: row[stored.idPosition])
      }
      return try result.row()
    }
  }

  /// Creates an empty entity.
  ///
  /// - Throws: ``CofferError/Code/migrationFailed`` when the store has an entity of that name.
  public func create(_ schema: EntitySchema) throws {
    guard try !hasEntity(schema.name) else {
      throw failure(
        "the store already has an entity '\(schema.name)'; remove or rename it first.", entity: schema.name)
    }
    try editor.create(schema)
  }

  /// Stores a new record in its entity.
  ///
  /// - Throws: ``CofferError/Code/migrationFailed`` when the record is incomplete, its id is
  ///   taken or it breaks a unique index.
  public func insert(_ record: DynamicRecord) throws {
    let row = try record.row()
    let schema = record.entity.schema
    try insertRow(row, into: schema)
    changes?.stored(row, in: schema, existed: false)
  }

  /// Removes an entity with all its rows.
  ///
  /// - Throws: ``CofferError/Code/migrationFailed`` when the store has no such entity.
  public func drop(_ entity: String) throws {
    let schema = try self.schema(of: entity)
    if changes != nil {
      try editor.scan(entity) { fields in
        changes?.removed(id: try Row(fields)[schema.idPosition], from: schema)
      }
    }
    try editor.drop(schema.name)
  }

  // MARK: - What the built-in steps are made of

  /// Gives an entity a schema that differs only in names; no row is rewritten.
  func relabel(_ entity: String, as schema: EntitySchema) throws {
    try editor.relabel(entity, as: schema)
  }

  /// Replaces an entity's schema and rows in one pass over positional rows: the rows go into
  /// a new entity made with `schema`, which then takes the entity's place.
  /// When `inEngine` is given, it says how `transform` changes a row — those built-in
  /// conversions at those positions, and nothing else — and the editor may do the pass inside
  /// its engine (``SchemaEditor/copyRows(from:into:converting:)``).
  func rewriteRows(
    _ entity: String, as schema: EntitySchema, inEngine: [Int: FieldConversion.BuiltIn]? = nil,
    _ transform: (Row) throws -> Row?
  ) throws {
    let names = Set(try editor.schemas().map(\.name))
    var scratch = "\(entity)~migrating"
    var attempt = 1
    while names.contains(scratch) {
      attempt += 1
      scratch = "\(entity)~migrating\(attempt)"
    }
    let scratchSchema = try schema.renamed(to: scratch)
    try editor.create(scratchSchema)
    // With the feed recorded, every row goes through here, to be compared: the copy inside the
    // engine does not say what it wrote.
    let stored = changes == nil ? nil : try self.schema(of: entity)
    if changes == nil, let inEngine,
      let copied = try editor.copyRows(from: entity, into: scratch, converting: inEngine)
    {
      rowsTouched += copied
    } else {
      try storing(reportingAs: schema.name) {
        try editor.scan(entity) { fields in
          rowsTouched += 1
          let row = try Row(fields)
          let output = try transform(row)
          if let output {
            try insertRow(output, into: scratchSchema, reportingAs: schema.name, staged: true)
          }
          if let stored { changes?.rewrote(row, of: stored, as: output, of: schema) }
        }
        try editor.flushInserts()
      }
    }
    try editor.drop(entity)
    try editor.relabel(scratch, as: schema)
  }

  /// Inserts a checked row, turning a refused one into ``CofferError/Code/migrationFailed``;
  /// `staged` lets the editor write it later (see ``SchemaEditor/stage(_:into:)``).
  func insertRow(
    _ row: Row, into schema: EntitySchema, reportingAs entity: String? = nil, staged: Bool = false
  ) throws {
    let shown = entity ?? schema.name
    let id = row.count > schema.idPosition ? row[schema.idPosition] : .null
    do {
      let checked = try QueryValidator.validate(row, schema: schema)
      if staged {
        try editor.stage(checked, into: schema.name)
      } else {
        try editor.insert(checked, into: schema.name)
      }
    } catch let error as CofferError {
      throw refused(error, entity: shown, id: id)
    }
  }

  /// Runs `body`, turning a row an editor kept and then refused (a unique clash or a repeated
  /// id, found when it wrote the rows it kept) into ``CofferError/Code/migrationFailed`` as
  /// ``insertRow(_:into:reportingAs:)`` does; `entity` names the rows' entity, or the error's
  /// entity is kept.
  func storing<R>(reportingAs entity: String? = nil, _ body: () throws -> R) throws -> R {
    do {
      return try body()
    } catch let error as CofferError where error.code == .uniqueViolation || error.code == .duplicateID {
      throw refused(error, entity: entity ?? error.entity, id: error.idValue ?? .null)
    }
  }

  /// The ``CofferError/Code/migrationFailed`` for a row the editor refused.
  private func refused(_ error: CofferError, entity: String?, id: Value) -> CofferError {
    failure(
      "a row of \(entity ?? "an entity") cannot be stored: \(error.message)", entity: entity,
      id: error.idValue ?? id, field: error.field, underlying: error)
  }

  /// The error of a step that cannot go on.
  func failure(
    _ reason: String, entity: String? = nil, id: Value? = nil, field: String? = nil,
    underlying: (any Error & Sendable)? = nil
  ) -> CofferError {
    let message = "Migration step '\(step)' failed: \(reason) Nothing of the step was applied."
    if let id, !id.isNull {
      return CofferError(
        .migrationFailed, message, store: store, entity: entity, id: id, field: field, underlying: underlying)
    }
    return CofferError(
      .migrationFailed, message, store: store, entity: entity, field: field, underlying: underlying)
  }
}

extension EntitySchema {
  /// This schema under another entity name, with its references, indexes and fields.
  func renamed(to name: String) throws -> EntitySchema {
    try EntitySchema(
      name: name, fields: fields, idField: idField.name, indexes: indexes, references: references)
  }

  /// This schema with other fields, indexes and references (the id field keeps its name
  /// unless `idField` is given).
  func rebuilt(
    fields: [Field]? = nil, idField: String? = nil, indexes: [Index]? = nil,
    references: [EntityReference]? = nil
  ) throws -> EntitySchema {
    try EntitySchema(
      name: name, fields: fields ?? self.fields, idField: idField ?? self.idField.name,
      indexes: indexes ?? self.indexes, references: references ?? self.references)
  }
}
