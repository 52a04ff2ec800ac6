/// The interface every Coffer store implements: the SPI under ``Store``.
///
/// A backend stores rows of the entities it was prepared with, answers queries, and applies
/// batches of changes atomically. It never sees a user's Swift types — only ``EntitySchema``,
/// ``Row``, ``Query`` and ``ChangeSet``. ``Store`` validates every row and query against the
/// schema before it reaches the backend, so a backend may assume values are of their fields'
/// kinds, never NaN, with dates already rounded to the microsecond.
///
/// Passing the conformance suite (`CofferConformance`) is what makes a type a Coffer backend;
/// each requirement below states the guarantee the suite checks.
///
/// Implementations must be safe to call from many tasks at once.
///
/// ## Topics
/// - ``prepare(_:)``
/// - ``fetch(_:)``
/// - ``count(_:)``
/// - ``apply(_:)``
/// - ``get(entity:ids:)``
/// - ``read(_:_:)``
/// - ``read(entity:ids:_:)``
/// - ``insert(into:count:row:)``
/// - ``close()``
public protocol StorageBackend: AnyObject, Sendable {
  /// A short name for messages and logs: the store URL without secrets (`sqlite:///var/db.sqlite`).
  var name: String { get }

  /// What this backend can and cannot do. The conformance suite skips, and reports as
  /// skipped, exactly the checks that need a capability not declared here.
  var capabilities: BackendCapabilities { get }

  /// Makes the entities usable, creating or evolving their storage.
  ///
  /// Guarantees: after it returns, every entity listed can be fetched and changed. Calling it
  /// again with the same schemas changes nothing. If an entity is already stored with another
  /// schema, the stored data is evolved: a field that is new and optional reads as null in
  /// existing rows; a new field with a ``Field/defaultValue`` reads as that value; a field no
  /// longer declared is ignored (its data may be kept but is never returned). A field whose kind
  /// changed, or a new required field with no default, fails with
  /// ``CofferError/Code/schemaMismatch`` naming entity, field, stored kind and new kind — and
  /// changes nothing. ``SchemaEvolution`` computes these rules for a backend.
  func prepare(_ schemas: [EntitySchema]) async throws

  /// The rows a query selects, in its order, sliced by its offset and limit.
  ///
  /// Guarantees: the result reflects a state in which each applied ``ChangeSet`` is either
  /// wholly visible or not at all; rows follow ``Query/sort`` with nulls first ascending and
  /// last descending, ties broken by id ascending; filter semantics are those of ``Filter``.
  /// Rows have exactly the prepared schema's fields, in order.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` for an entity that was not prepared.
  func fetch(_ query: Query) async throws -> [Row]

  /// The number of rows the query selects, honouring its filter, offset and limit.
  func count(_ query: Query) async throws -> Int

  /// Applies a batch atomically.
  ///
  /// Guarantees: either every operation takes effect, in order, or none does. A failed batch
  /// leaves the store exactly as it was and throws a ``CofferError`` that names the entity and
  /// id (and for unique violations the fields): ``CofferError/Code/duplicateID``,
  /// ``CofferError/Code/notFound`` or ``CofferError/Code/uniqueViolation``. On a backend that
  /// declares ``BackendCapabilities/durable``, the changes survive a crash once this returns.
  ///
  /// Rows are stored in the shape their entity has when the batch is applied: when
  /// ``ChangeSet/layouts`` names another schema for an entity (it was prepared again while
  /// the batch waited), pass its rows through ``ChangeSet/reshaper(for:store:)``, made inside
  /// the write transaction. ``InMemoryTables`` does this itself.
  @discardableResult
  func apply(_ changes: ChangeSet) async throws -> ChangeSummary

  /// The rows with the given ids, in the order of `ids`, skipping ids that are not stored.
  ///
  /// A fast path for point reads. The default implementation runs one ``fetch(_:)`` with an
  /// `isIn` filter on the id field; a backend can do better.
  func get(entity: EntitySchema, ids: [Value]) async throws -> [Row]

  /// Reads the rows a query selects in place: hands each one to `visit`, in the query's order
  /// and slice, without making a ``Row`` of it when the backend can avoid that.
  ///
  /// A fast path for typed reads: ``Store`` decodes values straight from the ``StoredFields``
  /// it is given. The guarantees are those of ``fetch(_:)``: `visit` sees exactly the rows
  /// `fetch` would return, in the same order, each field's value the one `fetch` would put in
  /// the row. The fields are valid only during the call to `visit`. An error thrown by `visit`
  /// stops the read and is rethrown as it is. The default implementation fetches the rows and
  /// hands over each ``Row``.
  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws

  /// Reads the rows with the given ids in place, in the order of `ids`, skipping ids that are
  /// not stored: ``get(entity:ids:)`` as ``read(_:_:)`` is to ``fetch(_:)``. The default
  /// implementation calls ``get(entity:ids:)`` and hands over each ``Row``.
  func read(entity: EntitySchema, ids: [Value], _ visit: (any StoredFields) throws -> Void) async throws

  /// Inserts `count` new rows of one entity atomically, asking `row` for each in turn.
  ///
  /// A fast path for bulk inserts: a backend that writes rows one by one inside its
  /// transaction can encode, write and drop each row before asking for the next, so a large
  /// insert never holds every row in memory at once. The guarantees are those of
  /// ``apply(_:)`` with one `insert` per row, in order: all of them or none. An error thrown by
  /// `row` aborts the whole insert and is rethrown as it is. `row` may be called again for the
  /// same position if the backend retries its transaction. `entity` is the schema the rows are
  /// made for: reshape them as ``apply(_:)`` does when the entity has another one now. The
  /// default implementation asks for every row, then calls ``apply(_:)``.
  @discardableResult
  func insert(into entity: EntitySchema, count: Int, row: @Sendable (Int) throws -> Row) async throws
    -> ChangeSummary

  /// Releases the backend's resources. Later calls fail with ``CofferError/Code/closed``.
  /// Closing twice is harmless. A durable backend has persisted everything applied.
  func close() async throws
}

extension StorageBackend {
  /// Asks for every row, then applies them as one ``ChangeSet``.
  ///
  /// When `row` throws at some position, the rows before it are tried first — in a batch
  /// that ends by inserting its first row again, so it can never be applied — because a
  /// failure among them comes first and is the error to throw. Nothing is applied either way.
  @discardableResult
  public func insert(into entity: EntitySchema, count: Int, row: @Sendable (Int) throws -> Row) async throws
    -> ChangeSummary
  {
    var rows: [Row] = []
    rows.reserveCapacity(count)
    do {
      for position in 0..<count { rows.append(try row(position)) }
    } catch {
      try await throwFirstFailure(of: rows, into: entity, before: error)
    }
    return try await apply(
      ChangeSet(rows.map { .insert(entity: entity.name, row: $0) }, layouts: [entity.name: entity]))
  }

  /// Throws the error the first of `rows` that cannot be inserted would give, or else `later`,
  /// the error of the row after them; applies nothing.
  private func throwFirstFailure(of rows: [Row], into entity: EntitySchema, before later: any Error)
    async throws -> Never
  {
    guard let first = rows.first else { throw later }
    let id = first[entity.idPosition]
    let trial =
      rows.map { ChangeSet.Operation.insert(entity: entity.name, row: $0) } + [
        .insert(entity: entity.name, row: first)
      ]
    do {
      try await apply(ChangeSet(trial, layouts: [entity.name: entity]))
    } catch let failure as CofferError where failure.code == .duplicateID && failure.entity == entity.name {
      // The closing insert fails like this too: tell the two apart by whether the first row's
      // id was stored before, or appears twice among the rows.
      if failure.id != id.description { throw failure }
      let repeated = rows.count { $0[entity.idPosition] == id } > 1
      if repeated { throw failure }
      if try await !get(entity: entity, ids: [id]).isEmpty { throw failure }
    }
    throw later
  }

  /// Fetches the rows, then hands over each.
  public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try RowFields.handOver(try await fetch(query), to: visit)
  }

  /// Gets the rows, then hands over each.
  public func read(entity: EntitySchema, ids: [Value], _ visit: (any StoredFields) throws -> Void)
    async throws
  {
    try RowFields.handOver(try await get(entity: entity, ids: ids), to: visit)
  }

  /// Fetches with an `isIn` filter on the id and puts the rows in the order of `ids`.
  public func get(entity: EntitySchema, ids: [Value]) async throws -> [Row] {
    if ids.isEmpty { return [] }
    var query = Query(entity: entity.name, filter: .isIn(entity.idField.name, ids))
    query.layout = entity
    let rows = try await fetch(query)
    if ids.count == 1 { return rows }
    var byID: [Value: Row] = [:]
    for row in rows { byID[row[entity.idPosition]] = row }
    return ids.compactMap { byID[$0] }
  }
}

/// What a backend can do; the conformance suite skips checks that need what it lacks.
public struct BackendCapabilities: OptionSet, Sendable, Hashable {
  /// The raw bits.
  public let rawValue: Int
  /// A capability from raw bits.
  public init(rawValue: Int) { self.rawValue = rawValue }

  /// Data survives closing the backend and opening the same location again.
  public static let reopenable = BackendCapabilities(rawValue: 1 << 0)
  /// Applied changes survive a killed process.
  public static let durable = BackendCapabilities(rawValue: 1 << 1)
  /// Several processes may open the same location at once.
  public static let multiProcess = BackendCapabilities(rawValue: 1 << 2)
  /// A ``ChangeSet`` touching several entities is atomic across them.
  public static let crossEntityTransactions = BackendCapabilities(rawValue: 1 << 3)
  /// Stored schemas evolve when prepared again with a changed schema (requires reopening to test).
  public static let schemaEvolution = BackendCapabilities(rawValue: 1 << 4)

  /// The names of the capabilities set, for reports.
  public var names: [String] {
    var names: [String] = []
    if contains(.reopenable) { names.append("reopenable") }
    if contains(.durable) { names.append("durable") }
    if contains(.multiProcess) { names.append("multiProcess") }
    if contains(.crossEntityTransactions) { names.append("crossEntityTransactions") }
    if contains(.schemaEvolution) { names.append("schemaEvolution") }
    return names
  }
}
