import Logging

/// The typed face of a store: keep, find and change ``Storable`` values.
///
/// A store wraps one ``StorageBackend``. App code uses the store and never names the backend,
/// so the backend is a configuration choice:
///
/// ```swift
/// let store = try await Store.open(url: "sqlite:///var/app/db.sqlite", registry: .builtIn)
/// try await store.insert(Message(id: 1, threadID: 7, text: "Hello", date: .now))
/// let page = try await store.query(Message.self)
///   .filter(\.threadID == 7)
///   .sort(\.date, .descending)
///   .limit(50)
///   .fetch()
/// ```
///
/// A type's schema is derived and its entity prepared the first time the store sees the type;
/// list types in ``prepare(_:)-9owgb`` to do it up front, so that a schema
/// mismatch surfaces at open.
///
/// `Store` is safe to share between tasks.
///
/// Give it a `Logger` (swift-log) to see what it does: opening and closing at `info`,
/// preparing entities at `debug`, every batch and query at `trace`. Lines carry the store's
/// name (`coffer.store`) and entity names, counts and error codes — never a stored value.
public final class Store: Sendable {
  /// The backend this store talks to.
  @_spi(Backend) public let backend: any StorageBackend
  /// Where this store logs, with the store's name as `coffer.store` metadata.
  public let logger: Logger

  struct Prepared {
    /// The codec of each type whose entity is prepared with its schema: only current owners
    /// have one, so a lookup by type alone is enough.
    var codecs: [ObjectIdentifier: any CodecBoxing] = [:]
    /// Which type's schema each entity is prepared with.
    var owners: [String: ObjectIdentifier] = [:]
    var schemas: [String: EntitySchema] = [:]

    /// Gives an entity to a new owner (`nil`: a schema with no Swift type), forgetting the codec
    /// of the type that had it.
    mutating func claim(_ entity: String, for owner: ObjectIdentifier?) {
      if let previous = owners[entity], previous != owner { codecs[previous] = nil }
      owners[entity] = owner
    }
  }
  let prepared = LockedState(Prepared())
  /// Query observers, told after every successful ``apply(_:)`` (see `Store+Observation.swift`).
  let observers = LockedState(StoreObservers())
  /// Where transactions that conflicted take turns (see `StoreTransaction.swift`).
  let gate = TransactionGate()
  /// The references among the stored entities, once read (see `ReferenceMap.swift`).
  let references = LockedState<ReferenceMap?>(nil)
  /// When reads last let other tasks have their thread (see ``ReadTurns``).
  @usableFromInline let turns: ReadTurns
  /// What this store counts and traces; `nil` when no metrics factory and no tracer was
  /// bootstrapped or bound to the task when it was made (see ``StoreTelemetry``).
  @usableFromInline package let telemetry: StoreTelemetry?

  /// A store over a backend, logging to `logger` (nothing when `nil`).
  @_spi(Backend) public init(backend: any StorageBackend, logger: Logger? = nil) {
    self.backend = backend
    self.logger = (logger ?? .disabled).forStore(backend.name)
    self.turns = ReadTurns(for: backend)
    self.telemetry = StoreTelemetry.current(store: backend.name)
  }

  /// The backend's name, for the typed paths, which are inlinable and so reach the backend
  /// and the row-level types (SPI) only through the members below that say so.
  @usableFromInline var backendName: String { backend.name }

  /// Reads the rows of the given ids from the backend, in id order, in the store's read turn:
  /// for the inlinable typed reads by id, which decode in `visit`.
  @usableFromInline
  func readRows(ids: [Value], in schema: EntitySchema, _ visit: (StoredRow) throws -> Void) async throws {
    let query = ids.count == 1 ? Query(lookingUp: ids[0], in: schema) : Query(lookingUp: ids, in: schema)
    try await readInTurn(.get, schema.name) { try await backend.read(query) { try visit(StoredRow($0)) } }
  }

  /// ``readRows(ids:in:_:)`` for one id, with no array to allocate: the point read.
  @usableFromInline
  func readRow(id: Value, in schema: EntitySchema, _ visit: (StoredRow) throws -> Void) async throws {
    let query = Query(lookingUp: id, in: schema)
    try await readInTurn(.get, schema.name) { try await backend.read(query) { try visit(StoredRow($0)) } }
  }

  /// The backend's ``StorageBackend/apply(_:)``.
  func backendApply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try await backend.apply(changes)
  }

  /// Opens the store a URL names, with the backends of a registry. The store and its backend
  /// log to `logger` (nothing when `nil`).
  ///
  /// - Throws: ``CofferError/Code/invalidURL`` or ``CofferError/Code/unknownScheme`` with the
  ///   supported schemes, or the backend's error on open.
  public static func open(url: String, registry: BackendRegistry, logger: Logger? = nil) async throws -> Store
  {
    let store = Store(backend: try await registry.open(url, logger: logger), logger: logger)
    store.logger.info(
      "Opened the store",
      metadata: ["coffer.capabilities": .string(store.backend.capabilities.names.joined(separator: ","))])
    return store
  }

  /// Prepares the entities of the given types now: creates or evolves their storage and fails
  /// here, not at first use, if a stored schema does not match.
  public func prepare(_ types: [any Storable.Type]) async throws {
    for type in types { try await prepareType(type) }
  }

  /// Prepares entities whose schemas are known only at run time (no Swift type); use them with
  /// the row API (``fetchRows(_:)``, ``apply(_:)``).
  public func prepare(schemas: [EntitySchema]) async throws {
    try await observed(.prepare, entity: schemas.count == 1 ? schemas[0].name : nil) {
      try await backend.prepare(schemas)
    }
    forgetReferences()
    for schema in schemas { logPrepared(schema) }
    prepared.withLock { state in
      for schema in schemas {
        state.schemas[schema.name] = schema
        state.claim(schema.name, for: nil)
      }
    }
  }

  /// The prepared schema of an entity, or `nil`.
  public func schema(of entity: String) -> EntitySchema? { prepared.withLock { $0.schemas[entity] } }

  /// Every entity the store holds, with the schema its rows are stored in, sorted by name —
  /// also entities this `Store` never prepared (written by another app version or process).
  ///
  /// What a tool needs to open a store without the app's types: prepare these schemas with
  /// ``prepare(schemas:)`` and read them with the row API.
  public func storedSchemas() async throws -> [EntitySchema] {
    try await rethrowing { try await backend.prepare([]) }
  }

  /// Closes the backend. Later calls fail with ``CofferError/Code/closed``.
  public func close() async throws {
    try await backend.close()
    logger.info("Closed the store")
  }

  private func logPrepared(_ schema: EntitySchema) {
    logger.debug(
      "Prepared an entity",
      metadata: [
        "coffer.entity": .string(schema.name), "coffer.fields": .stringConvertible(schema.fields.count),
        "coffer.indexes": .stringConvertible(schema.indexes.count),
      ])
  }

  private func prepareType<T: Storable>(_ type: T.Type) async throws { _ = try await codec(for: type) }

  /// The codec of a type, preparing its entity the first time (or again, when another type
  /// with the same entity name prepared it since).
  ///
  /// Inlinable, as are the typed calls on the hot paths (`get`, `insert`, `fetch`), so that they
  /// are specialized for the caller's type: in generic code, every row would look up the
  /// runtime metadata of `T`'s arrays and codecs.
  @inlinable
  func codec<T: Storable>(for type: T.Type) async throws -> RowCodec<T> {
    if let box = codecBox(for: ObjectIdentifier(type)) { return CodecBox<T>.unbox(box) }
    return try await prepareCodec(for: type)
  }

  /// The cached codec of the type with this identifier, if its entity is prepared with it.
  @usableFromInline
  func codecBox(for key: ObjectIdentifier) -> (any CodecBoxing)? {
    prepared.withLock { $0.codecs[key] }
  }

  /// Makes a type's codec, prepares its entity and caches the codec.
  @usableFromInline
  func prepareCodec<T: Storable>(for type: T.Type) async throws -> RowCodec<T> {
    let key = ObjectIdentifier(type)
    let codec: RowCodec<T>
    do {
      codec = try RowCodec<T>()
      try await observed(.prepare, entity: codec.schema.name) { try await backend.prepare([codec.schema]) }
    } catch let error as CofferError {
      throw error.inStore(backend.name)
    }
    forgetReferences()
    prepared.withLock { state in
      state.claim(T.entityName, for: key)
      state.codecs[key] = CodecBox(codec)
      state.schemas[T.entityName] = codec.schema
    }
    logPrepared(codec.schema)
    return codec
  }

  /// Prepares the entity of a codec made outside ``prepareCodec(for:)`` (by a ``Batch``) and
  /// caches the codec, as ``prepareCodec(for:)`` would.
  func adopt(_ box: any CodecBoxing, for key: ObjectIdentifier) async throws {
    let schema = box.schema
    do {
      try await observed(.prepare, entity: schema.name) { try await backend.prepare([schema]) }
    } catch let error as CofferError {
      throw error.inStore(backend.name)
    }
    forgetReferences()
    prepared.withLock { state in
      state.claim(schema.name, for: key)
      state.codecs[key] = box
      state.schemas[schema.name] = schema
    }
    logPrepared(schema)
  }

  /// The prepared schema of an entity for the row API.
  func preparedSchema(_ entity: String) throws -> EntitySchema {
    guard let schema = schema(of: entity) else {
      throw CofferError(
        .unknownEntity,
        "Entity '\(entity)' was not prepared in this store. Call prepare(schemas:) or use its Storable type first.",
        store: backend.name, entity: entity)
    }
    return schema
  }
}
