@_spi(Backend) import Coffer

/// Sending: the row states this replica's feed recorded after a position.
extension SyncReplica {
  /// The row states this replica's feed recorded after `position`, up to ``messageLimit`` of
  /// them (a whole number of batches), after stamping the app's latest changes.
  ///
  /// When the feed no longer holds the batch after `position` (it was trimmed), the message is a
  /// snapshot: every row state this replica keeps, up to the feed's last position.
  public func message(after position: ChangePosition?) async throws -> SyncMessage {
    try await stamp()
    guard let identity else { throw notReady() }
    var states: [SyncRowState] = []
    var places: [String: Int] = [:]
    var end = position
    do {
      for try await batch in store.changes(after: position) {
        end = batch.position
        for change in batch.changes {
          guard let state = try SyncRecords.state(from: change, store: name) else { continue }
          // A later record of the same row holds everything an earlier one did.
          if let place = places[state.key] {
            states[place] = state
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
