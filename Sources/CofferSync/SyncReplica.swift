@_spi(Backend) import Coffer
import Foundation

/// A store taking part in sync: it stamps its own changes with a hybrid logical clock, sends the
/// row states its feed recorded, and merges those other replicas send (see <doc:Sync>).
///
/// All it keeps — its replica id, its clock, how far it has stamped its feed and merged each
/// peer's — lives in the store itself, in entities named `coffer.sync.*`, written in the same
/// batch as the rows they describe; so a replica closed, killed or moved to another process
/// goes on where it stopped, and applies each change once. The store's change feed is turned
/// on if it is off.
///
/// ```swift
/// let phone = SyncReplica(store: try await Store.open(url: "sqlite:///data/notes.sqlite", registry: .builtIn))
/// let server = SyncReplica(store: try await Store.open(url: "lmdb:///srv/notes", registry: .builtIn))
/// try await Synchronizer(local: phone, remote: server).sync()
/// ```
public actor SyncReplica {
  /// The store.
  public nonisolated let store: Store
  /// How many row states one message holds at most.
  public var messageLimit = 500

  let wall: @Sendable () -> Int64
  /// The policies this replica resolves conflicts by, per entity (last writer wins for the rest).
  let policies: [String: SyncPolicy]
  /// Whether rows that predate sync here carry the implicit genesis stamp (see ``init(store:wall:policies:genesis:)``).
  let usesGenesis: Bool
  /// The genesis stamp of the rows this store holds without a sync state of their own, `nil`
  /// when every stored row has one.
  var genesis: SyncClock?
  /// The genesis stamp whose rows this store has all of (see ``SyncRecords/completeGenesisKey``).
  var completeGenesis: SyncClock?
  /// Stretches of this store's feed that hold only bootstrap batches this actor wrote: the feed
  /// after each key up to its value. Stamping skips them unread.
  var ownBatches: [UInt64: UInt64] = [:]
  var name: String? { store.backend.name }
  var identity: String?
  var clock: HybridClock?
  /// The `clock` setting as stored, which every write of this replica's records expects
  /// unchanged: another process writing the same store's records makes the write fail and
  /// start again.
  var clockRow: Row?
  var stampedThrough: UInt64?
  var schemas: [String: EntitySchema] = [:]
  /// Each peer's position merged here, also those not yet written (a window that changed
  /// nothing is not recorded at once).
  var accepted: [String: UInt64] = [:]
  /// Bootstrap batches written by this actor, numbered so that each one changes its setting.
  var bootstrapBatches = 0
  /// The rows this replica keeps, `nil` for every row (see ``subscribe(_:)``).
  var partial: SyncSubscriptions?
  /// On a partial replica, the states stamping wrote since it last removed the rows outside the
  /// subscriptions.
  var stampedSinceLeaving: [SyncRowState] = []
  /// The backend whose server runs this replica (see ``init(servedBy:)``), `nil` for a replica
  /// that works on its store's records itself.
  nonisolated let served: (any SyncServing)?
  /// The server's replica as this token sees it, once asked.
  var servedInfo: SyncServedReplica?

  /// A replica of `store`; `wall` gives the time in microseconds since 1970 (tests pass a
  /// clock of their own).
  ///
  /// Give `policies` to one replica only, the server: it alone resolves conflicts by them, and
  /// the others take its outcomes as ordinary changes (see ``SyncPolicy``).
  ///
  /// With `genesis` set to ``Genesis/implicit``, the rows the store holds when it first takes part
  /// in sync are not stamped one by one: they all carry one implicit *genesis* stamp, and a first
  /// sync into an empty replica copies them in bulk (see <doc:Sync>, "Bootstrap"). The default,
  /// ``Genesis/stamped``, writes a sync state for every row.
  ///
  /// With `subscriptions`, the replica is partial: it keeps only the rows they match, and a peer
  /// sends it only those (see ``subscribe(_:)`` and <doc:Sync>, "Partial sync"); `nil` keeps every
  /// row. A partial replica uses ``Genesis/stamped``.
  public init(
    store: Store, wall: (@Sendable () -> Int64)? = nil, policies: [String: SyncPolicy] = [:],
    genesis: Genesis = .stamped, subscriptions: [SyncSubscription]? = nil
  ) {
    self.init(
      store: store, wall: wall, policies: policies, genesis: genesis, subscriptions: subscriptions,
      served: nil)
  }

  init(
    store: Store, wall: (@Sendable () -> Int64)?, policies: [String: SyncPolicy], genesis: Genesis,
    subscriptions: [SyncSubscription]?, served: (any SyncServing)?
  ) {
    self.store = store
    self.wall = wall ?? HybridClock.systemWall
    self.policies = policies
    self.usesGenesis = genesis == .implicit
    self.partial = subscriptions.map(SyncSubscriptions.init)
    self.served = served
  }

  /// How a replica treats the rows its store holds before it first syncs, and those a bootstrap
  /// brings it.
  public enum Genesis: Sendable, Hashable {
    /// Every row gets a sync state of its own when the store first takes part in sync (one write
    /// per row), and a bootstrap into this replica writes one per row it brings.
    case stamped
    /// Rows without a sync state carry one implicit genesis stamp: turning sync on writes one
    /// record, and an empty replica takes a bootstrap's rows as they are. The first change the
    /// app makes to such a row stamps every field of it (the replica no longer knows which
    /// fields the change touched).
    case implicit
  }

  /// The replica's id, made the first time the store takes part in sync.
  public func replicaID() async throws -> String {
    if let served { return try await servedReplica(served).id }
    try await ready()
    guard let identity else { throw notReady() }
    return identity
  }

  /// The schemas of the app's entities this replica syncs, by name.
  public func syncedSchemas() async throws -> [String: EntitySchema] {
    if let served { return try await servedReplica(served).schemas }
    try await ready()
    return schemas
  }

  /// Prepares the store for sync the first time it is used: turns the feed on, prepares the
  /// record entities, and on the very first run stamps every row the store already holds.
  func ready() async throws {
    if identity != nil { return }
    if usesGenesis && partial != nil {
      throw CofferError(
        .invalidConfiguration,
        "A replica with subscriptions keeps a sync state for every row it holds, so it cannot use the implicit "
          + "genesis stamp. Make it with SyncReplica.Genesis.stamped (coffer sync without --implicit-genesis).",
        store: name)
    }
    do {
      _ = try await store.lastChangePosition()
    } catch let error as CofferError where error.code == .invalidConfiguration {
      try await store.recordChanges()
    }
    let records = try SyncRecords.schemas()
    try await store.prepare(schemas: [records.rows, records.state, records.conflicts])
    try await loadSchemas()
    try await reload()
    if identity == nil {
      let id = UUID().uuidString.lowercased()
      let now = wall()
      let replicaRow = SyncRecords.setting("replica", text: id)
      let clockRow = SyncRecords.setting("clock", number: now, counter: 0)
      _ = try await store.apply(
        ChangeSet(
          [
            .insert(entity: SyncRecords.stateEntity, row: replicaRow),
            .insert(entity: SyncRecords.stateEntity, row: clockRow),
          ],
          layouts: [SyncRecords.stateEntity: records.state],
          preconditions: [.absent(.string("replica"), in: records.state)]))
      try await reload()
    }
    if stampedThrough == nil {
      if usesGenesis { try await markGenesis() } else { try await stampExisting() }
    }
    try await settleSubscriptions()
  }

  /// Reads the replica's settings from the store.
  func reload() async throws {
    let records = try SyncRecords.schemas()
    let rows = try await store.backend.get(
      entity: records.state,
      ids: [
        .string("replica"), .string("clock"), .string("stamped"), .string(SyncRecords.genesisKey),
        .string(SyncRecords.completeGenesisKey),
      ])
    var byKey: [String: Row] = [:]
    for row in rows { if case .string(let key) = row[0] { byKey[key] = row } }
    if case .string(let id)? = byKey["replica"]?[1] { identity = id }
    if let row = byKey["clock"], case .int(let physical) = row[2], case .int(let counter) = row[3],
      let identity
    {
      clock = HybridClock(replica: identity, physical: physical, logical: counter, wall: wall)
      clockRow = row
    }
    genesis = byKey[SyncRecords.genesisKey].flatMap(SyncRecords.clock(from:))
    completeGenesis = byKey[SyncRecords.completeGenesisKey].flatMap(SyncRecords.clock(from:))
    if case .int(let number)? = byKey["stamped"]?[2] {
      stampedThrough = UInt64(max(0, number))
    } else {
      stampedThrough = nil
    }
  }

  /// Reads the app's entities from the store.
  func loadSchemas() async throws {
    var found: [String: EntitySchema] = [:]
    for schema in try await store.storedSchemas() where !SyncRecords.isInternal(schema.name) {
      found[schema.name] = schema
    }
    let unprepared = found.values.filter { store.schema(of: $0.name) == nil }
    if !unprepared.isEmpty { try await store.prepare(schemas: unprepared.sorted { $0.name < $1.name }) }
    schemas = found
  }

  /// The schema of an app entity, reading the store again if it is not known yet.
  func schema(of entity: String) async throws -> EntitySchema? {
    if let known = schemas[entity] { return known }
    try await loadSchemas()
    return schemas[entity]
  }

  /// Prepares an app entity another replica syncs and this one lacks.
  public func adopt(_ schema: EntitySchema) async throws {
    if let served {
      try checkMayWrite(try await servedReplica(served))
      try await served.syncAdopt(schema)
      servedInfo?.schemas[schema.name] = schema
      return
    }
    try await ready()
    if let mine = schemas[schema.name] {
      try Self.checkSame(mine, schema, store: name)
      return
    }
    try await store.prepare(schemas: [schema])
    schemas[schema.name] = schema
  }

  static func checkSame(_ mine: EntitySchema, _ theirs: EntitySchema, store: String?) throws {
    if SyncRecords.fingerprint(mine) != SyncRecords.fingerprint(theirs) {
      throw schemaDiffers(entity: mine.name, store: store)
    }
  }

  static func schemaDiffers(entity: String, store: String?) -> CofferError {
    CofferError(
      .schemaMismatch,
      "Entity '\(entity)' has other fields in this replica than in the one it syncs with, so the two cannot "
        + "sync. Run the same migration plan on both stores, then sync again.", store: store, entity: entity)
  }

  func notReady() -> CofferError {
    CofferError(
      .backendFailure, "The store's sync records could not be read. Open the store again.", store: name)
  }

  /// The next clock reading.
  func tick() throws -> SyncClock {
    guard var clock else { throw notReady() }
    let reading = clock.tick()
    self.clock = clock
    return reading
  }

  /// Writes a batch of records and rows with the clock's new reading, expecting the clock's
  /// setting unchanged since it was read; on a conflict (another process synced this store
  /// meanwhile) the settings are read again and the error rethrown for the caller to start again.
  func commit(_ operations: [ChangeSet.Operation], preconditions: [ChangeSet.Precondition] = []) async throws
  {
    let records = try SyncRecords.schemas()
    guard let clock else { throw notReady() }
    let newClock = SyncRecords.setting("clock", number: clock.last.physical, counter: clock.last.logical)
    var expectations = preconditions
    if let clockRow {
      expectations.append(.unchanged(clockRow, in: records.state))
    } else {
      expectations.append(.absent(.string("clock"), in: records.state))
    }
    var layouts: [String: EntitySchema] = [
      SyncRecords.rowsEntity: records.rows, SyncRecords.stateEntity: records.state,
      SyncRecords.conflictsEntity: records.conflicts,
    ]
    for operation in operations where layouts[operation.entity] == nil {
      if let schema = schemas[operation.entity] { layouts[operation.entity] = schema }
    }
    do {
      _ = try await store.apply(
        ChangeSet(
          operations + [.upsert(entity: SyncRecords.stateEntity, row: newClock)], layouts: layouts,
          preconditions: expectations))
      clockRow = newClock
    } catch let error as CofferError where error.code == .conflict {
      try await reload()
      throw error
    }
  }

  /// Runs `body` again when it fails with a conflict (or an error of `also`), a few times.
  func retrying<T>(also codes: Set<CofferError.Code> = [], _ body: () async throws -> T) async throws -> T {
    var attempt = 0
    while true {
      do {
        return try await body()
      } catch let error as CofferError
        where (error.code == .conflict || codes.contains(error.code)) && attempt < 8
      {
        attempt += 1
      }
    }
  }

  /// Sync state records by key.
  func syncStates(_ keys: [String]) async throws -> [String: SyncRowState] {
    if keys.isEmpty { return [:] }
    let records = try SyncRecords.schemas()
    var found: [String: SyncRowState] = [:]
    for start in stride(from: 0, to: keys.count, by: 500) {
      let part = keys[start..<min(keys.count, start + 500)].map { Value.string($0) }
      for row in try await store.backend.get(entity: records.rows, ids: part) {
        let state = try SyncRecords.state(from: row, store: name)
        found[state.key] = state
      }
    }
    return found
  }

  /// App rows of one entity by id, keyed by their sync key.
  func storedRows(of schema: EntitySchema, ids: [Value]) async throws -> [String: Row] {
    var found: [String: Row] = [:]
    for start in stride(from: 0, to: ids.count, by: 500) {
      for row in try await store.backend.get(
        entity: schema, ids: Array(ids[start..<min(ids.count, start + 500)]))
      {
        found[SyncRowState.key(entity: schema.name, id: row[schema.idPosition])] = row
      }
    }
    return found
  }
}
