@_spi(Backend) import Coffer

/// Genesis: the rows a store holds without a sync state of their own carry one implicit stamp.
///
/// A replica made with ``SyncReplica/Genesis/implicit`` does not stamp the rows its store holds
/// when it first takes part in sync: it takes one clock reading, the genesis stamp, and records
/// it with the feed position it stands at. Every row stored without a sync state then has the
/// state "each field's stored value, set at the genesis stamp, never deleted". Stamping keeps
/// this true: a change the feed records after that position gives the row a state of its own.
extension SyncReplica {
  /// The first time a replica of ``Genesis/implicit`` takes part in sync: records the genesis
  /// stamp when the store holds rows (and none when it holds none), and the feed position that
  /// stamping goes on from.
  func markGenesis() async throws {
    let records = try SyncRecords.schemas()
    let before = try await store.lastChangePosition()?.sequence ?? 0
    var holdsRows = false
    for schema in schemas.values.sorted(by: { $0.name < $1.name }) {
      if !(try await store.fetchRows(Query(entity: schema.name, limit: 1)).isEmpty) {
        holdsRows = true
        break
      }
    }
    try await retrying {
      if stampedThrough != nil { return }
      var operations: [ChangeSet.Operation] = [
        .upsert(entity: SyncRecords.stateEntity, row: SyncRecords.setting("stamped", number: Int64(before)))
      ]
      let stamp = holdsRows ? try tick() : nil
      if let stamp {
        operations += [SyncRecords.genesisKey, SyncRecords.completeGenesisKey].map {
          .upsert(entity: SyncRecords.stateEntity, row: SyncRecords.setting($0, clock: stamp))
        }
      }
      try await commit(
        operations,
        preconditions: [
          .absent(.string("stamped"), in: records.state),
          .absent(.string(SyncRecords.genesisKey), in: records.state),
        ])
      stampedThrough = before
      genesis = stamp
      completeGenesis = stamp
    }
  }

  /// The genesis stamp whose rows this store has all of, `nil` if none.
  func genesisHeld() async throws -> SyncClock? {
    try await ready()
    return completeGenesis
  }

  /// The implicit state of a row stored without a sync state, with genesis stamp `stamp`.
  static func genesisState(of row: Row, schema: EntitySchema, stamp: SyncClock) -> SyncRowState {
    var fields: [String: SyncRowState.Stamped] = [:]
    for (position, field) in schema.fields.enumerated() {
      fields[field.name] = SyncRowState.Stamped(value: row[position], clock: stamp)
    }
    return SyncRowState(entity: schema.name, id: row[schema.idPosition], fields: fields)
  }

  /// The states of these keys: each one's sync state, or for a row stored without one on a
  /// replica with a genesis stamp, its implicit state. `stored` gives rows already read, by key;
  /// the others are read here and added to it.
  func statesWithGenesis(_ keys: [(entity: String, id: Value)], stored: inout [String: Row]) async throws
    -> [String: SyncRowState]
  {
    var known = try await syncStates(keys.map { SyncRowState.key(entity: $0.entity, id: $0.id) })
    guard let genesis else { return known }
    var missing: [String: [Value]] = [:]
    var seen: Set<String> = []
    for key in keys {
      let text = SyncRowState.key(entity: key.entity, id: key.id)
      guard known[text] == nil, stored[text] == nil, seen.insert(text).inserted else { continue }
      missing[key.entity, default: []].append(key.id)
    }
    for (entity, ids) in missing.sorted(by: { $0.key < $1.key }) {
      guard let schema = schemas[entity] else { continue }
      stored.merge(try await storedRows(of: schema, ids: ids)) { first, _ in first }
    }
    for key in keys {
      let text = SyncRowState.key(entity: key.entity, id: key.id)
      guard known[text] == nil, let row = stored[text], let schema = schemas[key.entity] else { continue }
      known[text] = Self.genesisState(of: row, schema: schema, stamp: genesis)
    }
    return known
  }
}
