/// The interface every Coffer store implements: the SPI under ``Store``.
///
/// A backend stores rows of the entities it was prepared with, answers queries, and applies
/// batches of changes atomically. It never sees a user's Swift types — only ``EntitySchema``,
/// ``Row``, ``Query`` and ``ChangeSet``. ``Store`` validates every row and query against the
/// schema before it reaches the backend, so a backend may assume values are of their fields'
/// kinds, never NaN, with dates already rounded to the microsecond.
///
/// Seven requirements, one per thing every store does, none with a default: its ``name`` and
/// ``capabilities``, ``prepare(_:)`` (which also lists what is stored), one read path
/// ``read(_:_:)``, ``count(_:)``, ``apply(_:)`` for every change including bulk inserts and
/// conditional batches, and ``close()``. Everything else a caller of the SPI uses —
/// ``fetch(_:)``, ``get(entity:ids:)``, ``insert(into:count:row:)``, ``storedSchemas()`` — is
/// built on them in this module, once for every backend. A backend keeps its own fast paths
/// inside the requirements: a lookup by id arrives as a ``Query`` whose
/// ``Query/lookedUpIDs(in:)`` says so.
///
/// What only some backends can do is a protocol of its own that a backend adopts, each with
/// its one guarantee, none with a default — adopting one without implementing it does not
/// compile: ``SnapshotReading`` (several reads on one state), ``SchemaEditing`` (migration
/// steps), ``AggregateComputing`` (aggregates in the engine), ``InPlaceModifying`` (a
/// read-and-write under the backend's own lock), ``CommitObserving`` (noticing commits made
/// elsewhere), ``StorageInspecting`` (describing and checking the engine's storage) and
/// ``CachedMemoryReleasing``. ``BackendCapabilities`` says only how a backend behaves
/// (durable, shared between processes, …), never which methods it has.
///
/// Passing the conformance suite (`CofferConformance`) is what makes a type a Coffer backend;
/// each requirement below states the guarantee the suite checks.
///
/// Implementations must be safe to call from many tasks at once.
///
/// ## How this interface evolves
///
/// A new ability arrives as a new refining protocol, never as a new requirement here, so an
/// existing backend keeps compiling and keeps passing the suite it passed. A requirement is
/// removed only after a release in which it is deprecated, and the deprecation says what
/// replaces it. A new guarantee on an existing requirement arrives as a new conformance check,
/// listed in the changelog, so a backend author learns of it from a failing check with a
/// message, not from a user.
///
/// ## Topics
/// - ``name``
/// - ``capabilities``
/// - ``prepare(_:)``
/// - ``read(_:_:)``
/// - ``count(_:)``
/// - ``apply(_:)``
/// - ``close()``
@_spi(Backend) public protocol StorageBackend: AnyObject, Sendable {
  /// A short name for messages and logs: the store URL without secrets (`sqlite:///var/db.sqlite`).
  var name: String { get }

  /// What this backend can and cannot do. The conformance suite skips, and reports as
  /// skipped, exactly the checks that need a capability not declared here.
  var capabilities: BackendCapabilities { get }

  /// Makes the entities usable, creating or evolving their storage, and returns every entity
  /// the store holds with the schema its rows are stored in, sorted by name.
  ///
  /// Guarantees: after it returns, every entity listed can be read and changed. Calling it
  /// again with the same schemas changes nothing. If an entity is already stored with another
  /// schema, the stored data is evolved: a field that is new and optional reads as null in
  /// existing rows; a new field with a ``Field/defaultValue`` reads as that value; a field no
  /// longer declared is ignored (its data may be kept but is never returned). A field whose kind
  /// changed, or a new required field with no default, fails with
  /// ``CofferError/Code/schemaMismatch`` naming entity, field, stored kind and new kind — and
  /// changes nothing. ``SchemaEvolution`` computes these rules for a backend.
  ///
  /// The list returned includes entities this process never prepared (a reopened store, or
  /// one another process wrote), each exactly as last prepared: fields with kinds, optionality
  /// and defaults, indexes and unique constraints. `prepare([])` changes nothing and only
  /// lists — what a tool that opens a store without the app's types calls.
  @discardableResult
  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema]

  /// Reads the rows a query selects, in its order and slice (``Query/offset``,
  /// ``Query/limit``), handing each one to `visit` in place — without making a ``Row`` of it
  /// when the backend can avoid that.
  ///
  /// The one read path: ``Store`` decodes typed values straight from the ``StoredFields`` it
  /// is given, and ``fetch(_:)`` and ``get(entity:ids:)`` are built on it.
  ///
  /// Guarantees: the rows reflect a state in which each applied ``ChangeSet`` is either wholly
  /// visible or not at all; they follow ``Query/sort`` with nulls first ascending and last
  /// descending, ties broken by id ascending; filter semantics are those of ``Filter``. Each
  /// row has exactly the fields of ``Query/layout`` (the entity's schema when it is `nil`),
  /// in order, even when the entity was prepared with another schema since (see
  /// ``RowReshaper/init(reading:as:store:)``). The fields are valid only during the call to
  /// `visit`. An error thrown by `visit` stops the read and is rethrown as it is.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` for an entity that was not prepared.
  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws

  /// The number of rows the query's filter selects.
  ///
  /// Only the query's entity, filter and layout count: its sort, offset and limit are not
  /// part of a count. ``Store`` applies offset and limit to the number (see
  /// ``Query/slice(ofCount:)``), once for every backend.
  ///
  /// - Throws: ``CofferError/Code/unknownEntity`` for an entity that was not prepared.
  func count(_ query: Query) async throws -> Int

  /// Applies a batch atomically.
  ///
  /// Guarantees: either every operation takes effect, in order, or none does. A failed batch
  /// leaves the store exactly as it was and throws a ``CofferError`` that names the entity and
  /// id (and for unique violations the fields): ``CofferError/Code/duplicateID``,
  /// ``CofferError/Code/notFound`` or ``CofferError/Code/uniqueViolation``. On a backend that
  /// declares ``BackendCapabilities/durable``, the changes survive a crash once this returns.
  ///
  /// A ``ChangeSet/Operation/insertMany(entity:rows:)`` is the inserts of its rows in order:
  /// ask its ``RowSource`` for each row as it is written, so a large insert never holds every
  /// row in memory; an error thrown by the source aborts the batch and is rethrown as it is.
  ///
  /// Rows are stored in the shape their entity has when the batch is applied: when
  /// ``ChangeSet/layouts`` names another schema for an entity (it was prepared again while
  /// the batch waited), pass its rows through ``ChangeSet/reshaper(for:store:)``, made inside
  /// the write transaction. ``InMemoryTables`` does this itself.
  @discardableResult
  func apply(_ changes: ChangeSet) async throws -> ChangeSummary

  /// Releases the backend's resources. Later calls fail with ``CofferError/Code/closed``.
  /// Closing twice is harmless. A durable backend has persisted everything applied.
  func close() async throws
}

extension StorageBackend {
  /// The rows a query selects, in its order and slice: ``read(_:_:)`` with each row made whole.
  @_spi(Backend) public func fetch(_ query: Query) async throws -> [Row] {
    var rows: [Row] = []
    if let limit = query.limit { rows.reserveCapacity(min(limit, 1024)) }
    try await read(query) { rows.append(try Row($0)) }
    return rows
  }

  /// The rows with the given ids, in the order of `ids` (an id listed twice gives its row
  /// twice), skipping ids that are not stored; rows in the layout of `entity`.
  @_spi(Backend) public func get(entity: EntitySchema, ids: [Value]) async throws -> [Row] {
    if ids.isEmpty { return [] }
    let rows = try await fetch(Query(lookingUp: ids, in: entity))
    if ids.count == 1 { return rows }
    var byID: [Value: Row] = [:]
    byID.reserveCapacity(rows.count)
    for row in rows { byID[row[entity.idPosition]] = row }
    return ids.compactMap { byID[$0] }
  }

  /// Inserts `count` new rows of one entity atomically, asking `row` for each in turn as it
  /// is written: one ``ChangeSet/Operation/insertMany(entity:rows:)``. `entity` is the schema
  /// the rows are made for.
  @discardableResult
  @_spi(Backend) public func insert(
    into entity: EntitySchema, count: Int, row: @Sendable @escaping (Int) throws -> Row
  )
    async throws -> ChangeSummary
  {
    try await apply(
      ChangeSet(
        [.insertMany(entity: entity.name, rows: RowSource(count: count, row))], layouts: [entity.name: entity]
      ))
  }

  /// Every entity the store holds with the schema its rows are stored in, sorted by name:
  /// ``prepare(_:)`` with nothing to prepare.
  @_spi(Backend) public func storedSchemas() async throws -> [EntitySchema] {
    try await prepare([])
  }
}

extension Query {
  /// A query for the rows with these ids, in id order, read in the layout of `entity`.
  ///
  /// Inlinable, as is ``init(lookingUp:in:)-(Value,_)``: a point read builds one per call.
  @inlinable
  package init(lookingUp ids: [Value], in entity: EntitySchema) {
    let idField = entity.fields[entity.idPosition].name
    self.entity = entity.name
    self.filter = ids.count == 1 ? .compare(field: idField, op: .equal, value: ids[0]) : .isIn(idField, ids)
    self.sort = []
    self.limit = nil
    self.offset = 0
    self.layout = entity
  }

  /// A query for the row with this id, read in the layout of `entity`.
  @inlinable
  package init(lookingUp id: Value, in entity: EntitySchema) {
    self.entity = entity.name
    self.filter = .compare(field: entity.fields[entity.idPosition].name, op: .equal, value: id)
    self.sort = []
    self.limit = nil
    self.offset = 0
    self.layout = entity
  }

  /// The id this query looks up when it is nothing but a lookup of one id (an id equality
  /// filter, no sort but by id ascending, no offset or limit); `nil` for any other query. The
  /// fast path of ``lookedUpIDs(in:)`` for a single point read, with nothing to allocate.
  @inlinable
  @_spi(Backend) public func lookedUpID(in schema: EntitySchema) -> Value? {
    guard case .compare(let field, .equal, let id) = filter, !id.isNull else { return nil }
    let idField = schema.fields[schema.idPosition].name
    guard field == idField, readsWholeInIDOrder(idField) else { return nil }
    return id
  }

  /// Whether this query takes every row it selects, in id order: no sort but by `idField`
  /// ascending, no offset or limit. What the fast paths below share.
  @usableFromInline
  func readsWholeInIDOrder(_ idField: String) -> Bool {
    offset == 0 && limit == nil && sort.allSatisfy { $0.field == idField && $0.ascending }
  }

  /// Whether this query reads every row, in id order, whole: no filter, no sort but by id
  /// ascending, no offset or limit. A backend's fast path for a scan.
  @_spi(Backend) public func readsEveryRowInIDOrder(of schema: EntitySchema) -> Bool {
    guard case .all = filter else { return false }
    return readsWholeInIDOrder(schema.fields[schema.idPosition].name)
  }

  /// The ids this query looks up — distinct, non-null, in id order — when it is nothing but
  /// a lookup by id (an id equality or `isIn` filter, no sort but by id ascending, no
  /// offset or limit); `nil` for any other query.
  ///
  /// A backend's fast path for point reads: reading these ids one by one, in this order,
  /// hands over exactly the rows ``StorageBackend/read(_:_:)`` must.
  @_spi(Backend) public func lookedUpIDs(in schema: EntitySchema) -> [Value]? {
    let idField = schema.idField.name
    guard readsWholeInIDOrder(idField) else { return nil }
    switch filter {
    case .compare(idField, .equal, let id):
      return id.isNull ? [] : [id]
    case .isIn(idField, let ids):
      if ids.count == 1 { return ids[0].isNull ? [] : ids }
      var seen = Set<Value>()
      return ids.filter { !$0.isNull && seen.insert($0).inserted }.sorted { ValueOrder.compare($0, $1) < 0 }
    default:
      return nil
    }
  }

  /// The number of rows this query's slice holds when its filter selects `total` rows:
  /// what is left after ``offset``, at most ``limit``.
  @_spi(Backend) public func slice(ofCount total: Int) -> Int {
    let afterOffset = max(0, total - max(0, offset))
    return limit.map { min(afterOffset, max(0, $0)) } ?? afterOffset
  }
}

/// How a backend behaves — whether its data survives a crash, whether several processes may
/// share it, … — for the store and the conformance suite, which skips checks that need what a
/// backend lacks. What a backend can do beyond ``StorageBackend``'s requirements is not a
/// capability but a protocol it adopts (``SnapshotReading`` and the others).
@_spi(Backend) public struct BackendCapabilities: OptionSet, Sendable, Hashable {
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
  /// ``StorageBackend/apply(_:)`` checks a batch's ``ChangeSet/preconditions`` inside its write
  /// transaction. ``Store`` refuses a batch with preconditions on a backend without it.
  public static let preconditions = BackendCapabilities(rawValue: 1 << 5)
  /// ``CommitObserving/commitMarker()`` changes with commits made through other handles or
  /// processes, so observers see them.
  public static let observesOtherHandles = BackendCapabilities(rawValue: 1 << 7)

  /// The names of the capabilities set, for reports.
  public var names: [String] {
    var names: [String] = []
    if contains(.reopenable) { names.append("reopenable") }
    if contains(.durable) { names.append("durable") }
    if contains(.multiProcess) { names.append("multiProcess") }
    if contains(.crossEntityTransactions) { names.append("crossEntityTransactions") }
    if contains(.schemaEvolution) { names.append("schemaEvolution") }
    if contains(.preconditions) { names.append("preconditions") }
    if contains(.observesOtherHandles) { names.append("observesOtherHandles") }
    return names
  }
}
