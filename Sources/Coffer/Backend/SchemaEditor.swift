import Foundation

/// What a migration step is made of, inside one write transaction of a backend: the stored
/// entities, their rows, and the store's record of the migration steps it has run.
///
/// A backend hands one to the body of ``SchemaEditing/editSchema(_:)``. Everything done
/// through it commits together when the body returns, or not at all when it throws, so a
/// migration step is never half applied. The core builds every step of a
/// ``MigrationPlan`` from these primitives, once for every backend; a backend only provides
/// them.
///
/// The editor is valid only during the body, and only on the thread that runs it.
@_spi(Backend) public protocol SchemaEditor: AnyObject {
  /// Every stored entity with the schema its rows are stored in, sorted by name, including
  /// what this transaction changed so far.
  func schemas() throws -> [EntitySchema]

  /// Hands every row of a stored entity to `visit`, in the entity's stored schema, in any
  /// order. The fields are valid only during the call. Rows inserted through this editor into
  /// the same entity during the scan need not be visited.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` when no such entity is stored; an error
  ///   thrown by `visit`, unchanged.
  func scan(_ entity: String, _ visit: (any StoredFields) throws -> Void) throws

  /// Creates an empty entity with this schema, its indexes and unique constraints.
  ///
  /// - Throws: ``CofferError/Code/invalidSchema`` when an entity with the name is stored.
  func create(_ schema: EntitySchema) throws

  /// Adds a row, in the entity's stored schema, as an insert of a batch would. A refused row
  /// leaves the editor usable: the caller may go on.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` or ``CofferError/Code/uniqueViolation``.
  func insert(_ row: Row, into entity: String) throws

  /// Adds a row as ``insert(_:into:)`` does, for a caller that gives up the whole step when a
  /// row is refused: the editor may keep the row and write it with others later — before any
  /// other call of the editor, or at ``flushInserts()`` — and a kept row that is refused then
  /// fails that call, with the error ``insert(_:into:)`` would have thrown for it. The default
  /// inserts the row at once.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` or ``CofferError/Code/uniqueViolation``, for
  ///   this row or one kept before it.
  func stage(_ row: Row, into entity: String) throws

  /// Writes the rows ``stage(_:into:)`` kept, if it keeps any. The default does nothing.
  ///
  /// - Throws: ``CofferError/Code/duplicateID`` or ``CofferError/Code/uniqueViolation`` naming
  ///   the first kept row that is refused, in the order they were staged.
  func flushInserts() throws

  /// Removes an entity: its rows, its indexes and its record in the catalog.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` when no such entity is stored.
  func drop(_ entity: String) throws

  /// Gives a stored entity a schema that differs from its stored one only in names: the
  /// entity's name and the fields' names may change; the number of fields, their order, kinds,
  /// optionality and defaults, the id position, and the indexes (by field position) stay. The
  /// rows are kept as they are — no row is read or written where the engine allows.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` when no such entity is stored;
  ///   ``CofferError/Code/invalidSchema`` when the new name is another stored entity's.
  func relabel(_ entity: String, as schema: EntitySchema) throws

  /// The migration steps recorded in the store, in the order they ran; empty for a store no
  /// plan has migrated.
  func migrations() throws -> [MigrationRecord]

  /// Appends a step to the store's record of migrations.
  func record(_ migration: MigrationRecord) throws

  /// Inserts every row of `source` into `target` inside the engine, where that is faster than
  /// ``scan(_:_:)`` and ``insert(_:into:)`` row by row: `target` is an entity created in this
  /// transaction with as many fields, of the same kinds but at the positions in
  /// `conversions`, whose non-null values are converted by those built-in conversions
  /// exactly as ``FieldConversion`` converts them. Only conversions that convert every value
  /// of their kind are passed, and never one that could break a unique index.
  ///
  /// Returns the number of rows inserted, or `nil`, having changed nothing, when the editor
  /// cannot do this copy in its engine; the caller then scans and inserts. The default
  /// returns `nil`.
  func copyRows(
    from source: String, into target: String, converting conversions: [Int: FieldConversion.BuiltIn]
  )
    throws -> Int?
}

@_spi(Backend) extension SchemaEditor {
  /// Inserts the row at once.
  public func stage(_ row: Row, into entity: String) throws { try insert(row, into: entity) }

  /// Nothing: rows are written as they are staged.
  public func flushInserts() throws {}

  /// `nil`: the caller copies the rows one by one.
  public func copyRows(
    from source: String, into target: String, converting conversions: [Int: FieldConversion.BuiltIn]
  ) throws -> Int? { nil }
}

/// One migration step a store has run, as its catalog records it.
public struct MigrationRecord: Sendable, Hashable, Codable {
  /// The step's name, unique within its plan.
  public var name: String
  /// The step's position in its plan, from 0: the store's schema version before the step ran.
  public var position: Int
  /// When the step ran (to the millisecond).
  public var appliedAt: Date
  /// How many rows the step wrote, read or removed.
  public var rowsTouched: Int

  /// A record.
  @_spi(Backend) public init(name: String, position: Int, appliedAt: Date, rowsTouched: Int) {
    self.name = name
    self.position = position
    self.appliedAt = appliedAt
    self.rowsTouched = rowsTouched
  }
}

extension MigrationRecord {
  /// The record as one line of JSON, the form every backend stores: dates in milliseconds
  /// since 1970, keys sorted, so a record reads back equal on every backend.
  @_spi(Backend) public func encoded() throws -> Data {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys]
    encoder.dateEncodingStrategy = .millisecondsSince1970
    return try encoder.encode(self)
  }

  /// A record stored by ``encoded()``.
  ///
  /// - Throws: ``CofferError/Code/corruptStore`` when the bytes are not a record.
  @_spi(Backend) public init(encoded data: Data, store: String?) throws {
    let decoder = JSONDecoder()
    decoder.dateDecodingStrategy = .millisecondsSince1970
    do {
      self = try decoder.decode(MigrationRecord.self, from: data)
    } catch {
      throw CofferError(
        .corruptStore,
        "The store's record of migration steps cannot be read; something other than Coffer changed it. "
          + "Restore the store from a backup.", store: store)
    }
  }
}
