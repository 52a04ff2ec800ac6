@_spi(Backend) import Coffer

/// Bootstrap: a replica that has merged nothing from another one takes that one's rows in bulk,
/// read in pages (inside one snapshot where the store has them), instead of its feed from the
/// beginning; then the feed follows from the position the bootstrap started at.
extension SyncReplica {
  /// The genesis stamp of the rows the store holds without a sync state, `nil` if it holds none
  /// (such rows are in no feed, so a new peer gets them by a bootstrap or a snapshot).
  func genesisStamp() async throws -> SyncClock? {
    try await ready()
    return genesis
  }

  /// Reads every row this replica keeps, after stamping the app's latest changes, and hands
  /// `deliver` one page at a time: per entity (referenced entities first) the rows stored
  /// without a sync state, then the sync states; then a last page. The next page is read while
  /// `deliver` works on this one.
  ///
  /// Without `includingRows`, only the sync states go: the receiver already holds every row of this
  /// replica's genesis stamp.
  func bootstrap(
    pageSize: Int, includingRows: Bool = true, _ deliver: @Sendable (SyncBootstrapPage) async throws -> Void
  ) async throws {
    try await stamp()
    guard let identity else { throw notReady() }
    let position = try await store.lastChangePosition()
    let order = referenceOrder()
    let entities = schemas.values.sorted {
      ((order[$0.name] ?? 0), $0.name) < ((order[$1.name] ?? 0), $1.name)
    }
    var template = SyncBootstrapPage(
      source: identity, position: position, entity: "", fingerprint: "", genesis: genesis)
    template.genesisComplete = genesis != nil && genesis == completeGenesis
    func send(_ page: SyncBootstrapPage) async throws { try await deliver(page) }
    let records = try SyncRecords.schemas()
    let name = self.name
    let limit = messageLimit
    if let reading = store.backend as? any SnapshotReading {
      try await reading.withSnapshot { snapshot in
        let read: BootstrapRead = { try await snapshot.read($0, $1) }
        for schema in entities {
          // In one snapshot a row has a state or it has none: the states are read first.
          let states = try await Self.states(of: schema.name, read: read, records: records.rows, store: name)
          let stamped = Set(states.map(\.key))
          var page = template
          page.entity = schema.name
          page.fingerprint = SyncRecords.fingerprint(schema)
          if includingRows {
            try await pages(of: schema, pageSize: pageSize, read: read) { rows in
              page.rows =
                stamped.isEmpty
                ? rows
                : rows.filter {
                  !stamped.contains(SyncRowState.key(entity: schema.name, id: $0[schema.idPosition]))
                }
              if !page.rows.isEmpty { try await send(page) }
            }
          }
          page.rows = []
          for start in stride(from: 0, to: states.count, by: limit) {
            page.states = Array(states[start..<min(states.count, start + limit)])
            try await send(page)
          }
        }
      }
    } else {
      let read = Self.reader(of: store.backend)
      for schema in entities {
        var page = template
        page.entity = schema.name
        page.fingerprint = SyncRecords.fingerprint(schema)
        if includingRows {
          try await pages(of: schema, pageSize: pageSize, read: read) { rows in
            // A state is written in the same batch as its row: a row read before its state has none.
            let known = try await syncStates(
              rows.map { SyncRowState.key(entity: schema.name, id: $0[schema.idPosition]) })
            page.rows = rows.filter {
              known[SyncRowState.key(entity: schema.name, id: $0[schema.idPosition])] == nil
            }
            if !page.rows.isEmpty { try await send(page) }
          }
        }
        page.rows = []
        let states = try await Self.states(of: schema.name, read: read, records: records.rows, store: name)
        for start in stride(from: 0, to: states.count, by: limit) {
          page.states = Array(states[start..<min(states.count, start + limit)])
          try await send(page)
        }
      }
    }
    var last = template
    last.isLast = true
    try await send(last)
  }

  typealias BootstrapRead = @Sendable (Query, (any StoredFields) throws -> Void) async throws -> Void

  /// Reads through the backend itself, outside a snapshot.
  nonisolated static func reader(of backend: any StorageBackend) -> BootstrapRead {
    { query, visit in try await backend.read(query, visit) }
  }

  /// Every row of an entity in id order, a page at a time, the next page read while `body`
  /// works on this one.
  ///
  /// A page also stops once its values pass about ``bootstrapPageBytes``, so rows with large
  /// values come in pages of fewer rows.
  func pages(
    of schema: EntitySchema, pageSize: Int, read: @escaping BootstrapRead,
    _ body: ([Row]) async throws -> Void
  ) async throws {
    @Sendable func fetch(after last: Value?) async throws -> (rows: [Row], more: Bool) {
      var query = Query(entity: schema.name, sort: [Sort(schema.idField.name)], limit: pageSize)
      if let last { query.filter = .compare(field: schema.idField.name, op: .greater, value: last) }
      query.layout = schema
      var rows: [Row] = []
      rows.reserveCapacity(min(pageSize, 16_384))
      var bytes = 0
      do {
        try await read(query) { fields in
          let row = try Row(fields)
          rows.append(row)
          bytes += Self.size(of: row)
          if bytes >= Self.bootstrapPageBytes, rows.count < pageSize { throw PageFull() }
        }
      } catch is PageFull {
        return (rows, true)
      }
      return (rows, rows.count == pageSize)
    }
    var page = try await fetch(after: nil)
    while let tail = page.rows.last {
      let after = tail[schema.idPosition]
      let more = page.more
      async let next = more ? fetch(after: after) : ([], false)
      try await body(page.rows)
      page = try await next
    }
  }

  /// About the most bytes of values a bootstrap page holds.
  static let bootstrapPageBytes = 16 << 20

  /// Thrown from a read's visitor to stop it when a page is full.
  private struct PageFull: Error {}

  /// About how many bytes a row's values take, counted as the data tools count them.
  static func size(of row: Row) -> Int { RowReader.size(of: row) }

  /// The sync states an entity's rows have.
  static func states(of entity: String, read: BootstrapRead, records: EntitySchema, store: String?)
    async throws
    -> [SyncRowState]
  {
    var query = Query(
      entity: records.name, filter: .compare(field: "entity", op: .equal, value: .string(entity)))
    query.layout = records
    var rows: [Row] = []
    try await read(query) { rows.append(try Row($0)) }
    return try rows.map { try SyncRecords.state(from: $0, store: store) }
  }

  /// Takes one page of a bootstrap from another replica; how many rows or states it changed here.
  ///
  /// Rows without a state are inserted as they are — no state written, this replica taking the
  /// sender's genesis stamp — when this replica uses ``Genesis/implicit``, has no genesis stamp
  /// of its own (or the same), keeps no state of the entity's rows and none of the rows is
  /// stored; otherwise, and for states, the page is merged as a message is. The last page records
  /// the sender's feed position the bootstrap started at (the earliest, if an earlier bootstrap
  /// was interrupted).
  func receive(bootstrap page: SyncBootstrapPage) async throws -> Int {
    try await ready()
    if page.source == identity { return 0 }
    if try await storedPosition(of: page.source) != nil { return 0 }
    let records = try SyncRecords.schemas()
    let key = SyncRecords.bootstrapKey(page.source)
    let earlier = try await store.backend.get(entity: records.state, ids: [.string(key)]).first
    var earliest = page.position?.sequence ?? 0
    if let earlier, case .int(let number) = earlier[2] { earliest = min(earliest, UInt64(max(0, number))) }
    let from = earliest
    bootstrapBatches += 1
    func marker(_ what: String) -> ChangeSet.Operation {
      .upsert(
        entity: SyncRecords.stateEntity,
        row: SyncRecords.setting(key, text: what, number: Int64(from), counter: Int64(bootstrapBatches)))
    }
    if page.isLast {
      try await retrying {
        var operations: [ChangeSet.Operation] = [
          marker(SyncRecords.bootstrapStates),
          .upsert(
            entity: SyncRecords.stateEntity,
            row: SyncRecords.setting(SyncRecords.peerKey(page.source), number: Int64(from))),
        ]
        // Every row of the sender's genesis stamp came (or its state did).
        let completes = page.genesisComplete && page.genesis != nil && genesis == page.genesis
        if completes, let stamp = page.genesis {
          operations.append(
            .upsert(
              entity: SyncRecords.stateEntity,
              row: SyncRecords.setting(SyncRecords.completeGenesisKey, clock: stamp)))
        }
        try await commit(operations)
        if completes { completeGenesis = page.genesis }
      }
      accepted[page.source] = max(accepted[page.source] ?? 0, from)
      return 0
    }
    guard let schema = try await schema(of: page.entity) else { throw unknown(page.entity) }
    if SyncRecords.fingerprint(schema) != page.fingerprint {
      throw Self.schemaDiffers(entity: page.entity, store: name)
    }
    var states = page.states
    if !page.rows.isEmpty {
      guard let stamp = page.genesis else { throw notReady() }
      if try await insertAsTheyAre(
        page.rows, schema: schema, stamp: stamp, marker: marker(SyncRecords.bootstrapRows))
      {
        return page.rows.count
      }
      states += page.rows.map { Self.genesisState(of: $0, schema: schema, stamp: stamp) }
    }
    let message = SyncMessage(
      source: page.source, from: nil, to: page.position, states: states,
      schemas: [page.entity: page.fingerprint])
    return try await retrying(also: [.referenceViolation, .uniqueViolation]) {
      try await stamp()
      var rows: [String: Row] = [:]
      let known = try await statesWithGenesis(states.map { ($0.entity, $0.id) }, stored: &rows)
      try await checkPurges(message, known: known, merged: nil)
      let changes = try await changes(merging: states, known: known, rows: rows)
      return try await applyMerge(changes, extra: [marker(SyncRecords.bootstrapStates)])
    }
  }

  /// Inserts a bootstrap's rows with no states, when this replica may take them so; whether it
  /// did. The batch expects no state of the entity's rows and inserts (so a stored row makes it
  /// fail): what the app or another merge wrote meanwhile sends the page the slow way.
  private func insertAsTheyAre(
    _ rows: [Row], schema: EntitySchema, stamp: SyncClock, marker: ChangeSet.Operation
  )
    async throws -> Bool
  {
    guard usesGenesis, genesis == nil || genesis == stamp, try await purgeHorizon() == nil else {
      return false
    }
    let records = try SyncRecords.schemas()
    var none = Query(
      entity: records.rows.name, filter: .compare(field: "entity", op: .equal, value: .string(schema.name)),
      limit: 1)
    none.layout = records.rows
    let genesisRow = SyncRecords.setting(SyncRecords.genesisKey, clock: stamp)
    let mine: ChangeSet.Precondition =
      genesis == nil
      ? .absent(.string(SyncRecords.genesisKey), in: records.state)
      : .unchanged(genesisRow, in: records.state)
    // This replica's later readings come after the stamp its new rows carry.
    clock?.observe(stamp)
    let before = try await store.lastChangePosition()?.sequence ?? 0
    do {
      try await commit(
        [
          .insertMany(entity: schema.name, rows: RowSource(rows)),
          .upsert(entity: SyncRecords.stateEntity, row: genesisRow), marker,
        ], preconditions: [mine, ChangeSet.Precondition(none, .count(0))])
      // When the feed moved by exactly one batch, that batch is this one: stamping may skip it.
      if let after = try await store.lastChangePosition()?.sequence, after == before + 1 {
        ownBatches[before] = after
      }
    } catch let error as CofferError
      where [.conflict, .duplicateID, .uniqueViolation, .referenceViolation].contains(error.code)
    {
      return false
    }
    genesis = stamp
    return true
  }
}
