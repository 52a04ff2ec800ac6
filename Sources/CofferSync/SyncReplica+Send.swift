@_spi(Backend) import Coffer

/// Sending: the row states this replica's feed recorded after a position.
extension SyncReplica {
  /// The row states this replica's feed recorded after `position`, up to ``messageLimit`` of
  /// them (a whole number of batches), after stamping the app's latest changes.
  ///
  /// When the feed no longer holds the batch after `position` (it was trimmed), the message is a
  /// snapshot: every row state this replica keeps, up to the feed's last position.
  ///
  /// From the beginning (`position` is `nil`) on a replica whose store holds rows with the
  /// genesis stamp, the message is a snapshot too: those rows are in no feed.
  ///
  /// With `subscriptions` (the receiver's, see ``SyncReplica/subscriptions``), the message holds
  /// only the states of rows that lie within them, and of the other rows of the entities they
  /// name only the clocks (``SyncMessage/outside``), so the receiver can remove a row that left
  /// them; it names the subscriptions it was filtered for. A replica with subscriptions of its own
  /// refuses to make one for subscriptions that filter rows (``CofferError/Code/unsupported``):
  /// partial replicas sync with full ones.
  public func message(after position: ChangePosition?, for subscriptions: [SyncSubscription]? = nil)
    async throws -> SyncMessage
  {
    if let served { return try await served.syncMessage(after: position, for: subscriptions) }
    // A receiver whose filters drop rows forgets them, and could take back from another partial
    // replica a state older than the one that made a row leave it.
    if partial != nil, subscriptions?.contains(where: { $0.filter != .all }) == true {
      throw CofferError(
        .unsupported,
        "Both replicas have subscriptions: a partial replica syncs only with a replica that keeps every row "
          + "(a server, or a store synced with one), which sends it the rows that leave its subscriptions.",
        store: name)
    }
    let message = try await unfilteredMessage(after: position)
    guard let subscriptions else { return message }
    return try filtered(message, for: subscriptions)
  }

  /// Every row state this replica's feed recorded after `position` (see ``message(after:for:)``).
  private func unfilteredMessage(after position: ChangePosition?) async throws -> SyncMessage {
    try await stamp()
    guard let identity else { throw notReady() }
    if position == nil, genesis != nil { return try await snapshot(after: nil, source: identity) }
    var states: [SyncRowState] = []
    var places: [String: Int] = [:]
    var end = position
    do {
      for try await batch in store.changes(after: position) {
        end = batch.position
        // A bootstrap's rows went in without states: they are sent with the genesis stamp.
        let bootstrap = genesis != nil && SyncRecords.isBootstrapRows(batch.changes)
        for change in batch.changes {
          guard
            let state = try SyncRecords.state(from: change, store: name)
              ?? (bootstrap ? genesisState(of: change) : nil)
          else { continue }
          // Records of one row merge into one state: a later record holds everything an earlier
          // one did, except on a partial replica that forgot the row between them (it left the
          // subscriptions, then came back with older values).
          if let place = places[state.key] {
            states[place] = states[place].merged(with: state)
          } else {
            places[state.key] = states.count
            states.append(state)
          }
        }
        if states.count >= messageLimit { break }
      }
    } catch let error as CofferError where error.code == .changesTrimmed {
      return try await snapshot(after: position, source: identity)
    }
    return SyncMessage(
      source: identity, from: position, to: end, states: states, schemas: fingerprints(of: states))
  }

  /// Every row state this replica keeps.
  func snapshot(after position: ChangePosition?, source: String) async throws -> SyncMessage {
    let end = try await store.lastChangePosition()
    var states: [SyncRowState] = []
    for row in try await allRecords() { states.append(try SyncRecords.state(from: row, store: name)) }
    if let genesis {
      for schema in schemas.values.sorted(by: { $0.name < $1.name }) {
        try await unstampedRows(of: schema) { rows in
          states += rows.map { Self.genesisState(of: $0, schema: schema, stamp: genesis) }
        }
      }
    }
    // Referenced rows before the rows that refer to them.
    let order = referenceOrder()
    states.sort { (order[$0.entity] ?? 0) < (order[$1.entity] ?? 0) }
    return SyncMessage(
      source: source, from: position, to: end, states: states, schemas: fingerprints(of: states),
      isSnapshot: true, purgedAt: try await purgeHorizon().map { ChangePosition(sequence: $0.position) })
  }

  /// Every sync state record this replica keeps, read a page at a time.
  func allRecords() async throws -> [Row] {
    let records = try SyncRecords.schemas()
    var rows: [Row] = []
    while true {
      var query = Query(entity: records.rows.name, sort: [Sort("key")], limit: 1000)
      if let last = rows.last { query.filter = .compare(field: "key", op: .greater, value: last[0]) }
      let page = try await store.fetchRows(query)
      rows += page
      if page.count < 1000 { return rows }
    }
  }

  /// The state with the genesis stamp of an app row a bootstrap batch inserted, `nil` for
  /// another change.
  func genesisState(of change: RowChange) -> SyncRowState? {
    guard let genesis, change.kind != .delete, !SyncRecords.isInternal(change.entity),
      let schema = schemas[change.entity]
    else { return nil }
    var values: [Value] = []
    for field in schema.fields {
      guard let value = change.value(of: field.name) else { return nil }
      values.append(value)
    }
    return Self.genesisState(of: Row(values), schema: schema, stamp: genesis)
  }

  /// Every row of an entity stored without a sync state, in id order, a page at a time; each
  /// page's sync states are read after its rows (a state is written with its row, so a row read
  /// without one has none).
  func unstampedRows(of schema: EntitySchema, pageSize: Int = 1000, _ body: ([Row]) async throws -> Void)
    async throws
  {
    try await pagesByID(of: schema, pageSize: pageSize) { page in
      let known = try await syncStates(
        page.map { SyncRowState.key(entity: schema.name, id: $0[schema.idPosition]) })
      let rows = page.filter {
        known[SyncRowState.key(entity: schema.name, id: $0[schema.idPosition])] == nil
      }
      if !rows.isEmpty { try await body(rows) }
    }
  }

  /// Every row of an entity in id order, a page of at most `pageSize` rows at a time, each page
  /// read after the last id of the one before.
  func pagesByID(of schema: EntitySchema, pageSize: Int, _ body: ([Row]) async throws -> Void) async throws {
    var last: Value?
    while true {
      var query = Query(entity: schema.name, sort: [Sort(schema.idField.name)], limit: pageSize)
      if let last { query.filter = .compare(field: schema.idField.name, op: .greater, value: last) }
      let page = try await store.fetchRows(query)
      guard let tail = page.last else { return }
      last = tail[schema.idPosition]
      try await body(page)
      if page.count < pageSize { return }
    }
  }

  func fingerprints(of states: [SyncRowState]) -> [String: String] {
    var result: [String: String] = [:]
    for state in states where result[state.entity] == nil {
      if let schema = schemas[state.entity] { result[state.entity] = SyncRecords.fingerprint(schema) }
    }
    return result
  }

  /// Each entity's depth in the reference graph: entities nothing refers from come first.
  func referenceOrder() -> [String: Int] {
    var depth: [String: Int] = [:]
    func visit(_ name: String, _ path: Set<String>) -> Int {
      if let known = depth[name] { return known }
      guard let schema = schemas[name], !path.contains(name) else { return 0 }
      var result = 0
      for reference in schema.references where reference.entity != name {
        result = max(result, visit(reference.entity, path.union([name])) + 1)
      }
      depth[name] = result
      return result
    }
    for name in schemas.keys { _ = visit(name, []) }
    return depth
  }
}
