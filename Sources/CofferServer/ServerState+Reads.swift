@_spi(Backend) import Coffer
import CofferWire
import Hummingbird

extension ServerState {
  /// `GET …/v1/store`.
  func storeInfo(_ call: Call) throws -> Response {
    let backend = call.store.backend
    var abilities: [String] = []
    if backend is any ChangeRecording { abilities.append("changeFeed") }
    if backend is any AggregateComputing { abilities.append("engineAggregates") }
    if backend is any CommitObserving { abilities.append("commitMarker") }
    return try json(
      WireStoreInfo(
        name: backend.name, capabilities: backend.capabilities.names, abilities: abilities, limits: limits))
  }

  /// `GET …/v1/commit-marker`: the backend's marker of the last commit any handle made, or
  /// null when it keeps none.
  func commitMarker(_ call: Call) async throws -> Response {
    let marker = try await (call.store.backend as? any CommitObserving)?.commitMarker()
    return try json(WireCommitMarker(marker: marker))
  }

  /// The schema a request's rows are in: the layout it names, else the entity's prepared one,
  /// else the stored one (prepared now, for an entity another process made).
  func schema(_ entity: String, layout: EntitySchema?, in call: Call) async throws -> EntitySchema {
    try call.check(entity: entity)
    if let layout {
      try check(layout, of: entity, in: call)
      return layout
    }
    if let schema = call.store.schema(of: entity) { return schema }
    let stored = try await call.store.storedSchemas().filter { $0.name == entity }
    if !stored.isEmpty { try await call.store.prepare(schemas: stored) }
    guard let schema = call.store.schema(of: entity) else {
      throw CofferError(
        .unknownEntity, "Entity '\(entity)' is not stored here. Prepare it first (POST …/v1/prepare).",
        store: call.storeName, entity: entity)
    }
    return schema
  }

  /// Refuses a filter that nests deeper than the server allows.
  func checkDepth(_ filter: Filter, in call: Call, entity: String) throws {
    let depth = filter.depth
    guard depth <= configuration.maxFilterDepth else {
      throw CofferError(
        .invalidQuery,
        "The filter nests \(depth) levels deep; this server allows \(configuration.maxFilterDepth). Flatten it.",
        store: call.storeName, entity: entity)
    }
  }

  /// Checks a query's filter and sort against the entity's schema, with the store's name in a
  /// failure; its rows come back in `layout` (the schema itself when `nil`). A layout may hold
  /// fewer fields than the filter names: a client that only needs ids asks for the id alone.
  func validated(_ query: Query, schema: EntitySchema, layout: EntitySchema? = nil, in call: Call) throws
    -> Query
  {
    try checkDepth(query.filter, in: call, entity: query.entity)
    do {
      var checked = try QueryValidator.validate(query, schema: schema)
      if let layout { checked.layout = layout }
      return checked
    } catch let error as CofferError {
      throw error.inStore(call.storeName)
    }
  }

  /// `POST …/v1/prepare`.
  func prepare(_ call: Call) async throws -> Response {
    let request = try decode(WirePrepare.self, from: call.body)
    if !request.schemas.isEmpty {
      for schema in request.schemas { try call.check(entity: schema.name) }
      if !call.grant.allows(.write) {
        // A reader's app prepares the models it reads: schemas equal to the stored ones
        // change nothing, so the read scope is enough for them.
        let stored = Dictionary(
          try await call.store.storedSchemas().map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        guard request.schemas.allSatisfy({ stored[$0.name] == $0 }) else {
          throw Forbidden(
            error: CofferError(
              .accessDenied,
              "Preparing entities that are not stored, or stored with another schema, needs the write scope; "
                + "this token may only list them and prepare the schemas already stored.",
              store: call.storeName))
        }
      }
      try await call.store.prepare(schemas: request.schemas)
    }
    return try json(WireSchemas(schemas: try await visibleSchemas(call)))
  }

  /// Every stored schema the token may see, without the server's own entity.
  func visibleSchemas(_ call: Call) async throws -> [EntitySchema] {
    try await call.store.storedSchemas().filter {
      $0.name != IdempotencyMemory.entity && call.grant.allows(entity: $0.name)
    }
  }

  /// `POST …/v1/read`.
  func read(_ call: Call) async throws -> Response {
    let request = try decode(WireQuery.self, from: call.body, reading: WireQueryJSON.read)
    let schema = try await schema(request.entity, layout: nil, in: call)
    let rowLayout = try rowLayout(of: request, schema: schema, in: call) ?? schema
    var query = request.query
    let keys = Keyset.keys(query.sort, schema: schema)
    if let after = request.after {
      guard after.values.count == keys.count else {
        throw CofferError(
          .invalidQuery,
          "The cursor holds \(after.values.count) values; this query's order needs \(keys.count) "
            + "(its sort fields, then the id).", store: call.storeName, entity: request.entity)
      }
      query.filter = query.filter && Keyset.following(after.values, keys)
    }
    let asked = query.limit
    let cap = configuration.maxRows
    query.limit = min(asked ?? Int.max, cap + 1)
    let checked = try validated(query, schema: schema, layout: rowLayout, in: call)
    var rows = try await call.store.observed(.fetch, entity: request.entity) {
      try await call.store.backend.fetch(checked)
    }
    if rows.count > cap {
      throw CofferError(
        .invalidQuery,
        "The query selects more than \(cap) rows, the most this server answers at once. Ask for pages "
          + "(limit with after or offset).", store: call.storeName, entity: request.entity)
    }
    var next: WireCursor?
    // The cursor holds the last row's sort keys: only when the row layout has them all.
    if let asked, asked > 0, rows.count == asked, let last = rows.last {
      let positions = keys.compactMap { rowLayout.position(of: $0.field) }
      if positions.count == keys.count { next = WireCursor(values: positions.map { last[$0] }) }
    }
    if let select = request.select {
      let positions = try select.map { try position(of: $0, in: rowLayout, call) }
      rows = rows.map { row in Row(positions.map { row[$0] }) }
    }
    return try json(WireRows(rows: rows.map(\.values), next: next))
  }

  private func position(of field: String, in schema: EntitySchema, _ call: Call) throws -> Int {
    guard let position = schema.position(of: field) else {
      throw CofferError(
        .invalidQuery, "Entity '\(schema.name)' has no field '\(field)'.", store: call.storeName,
        entity: schema.name, field: field)
    }
    return position
  }

  /// Refuses a layout that describes another entity than the request names.
  private func check(_ layout: EntitySchema, of entity: String, in call: Call) throws {
    guard layout.name == entity else {
      throw CofferError(
        .invalidQuery, "The layout describes entity '\(layout.name)', not '\(entity)'.",
        store: call.storeName, entity: entity)
    }
  }

  /// The stored schema `digest` names (``WireLayoutDigest``).
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` for a digest that is not the stored schema's.
  func storedLayout(named digest: String, schema: EntitySchema, in call: Call) throws -> EntitySchema {
    guard layoutDigests.digest(of: schema) == digest else {
      throw CofferError(
        .schemaMismatch,
        "The request names the layout of '\(schema.name)' by a digest that is not its stored schema here "
          + "(the schema changed, or the client is another version). Send the layout itself; nothing was "
          + "read or applied.",
        store: call.storeName, entity: schema.name)
    }
    return schema
  }

  /// The layout a query's rows come back in, when it names one: given whole, or by the digest
  /// of the entity's stored schema.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` for a digest that is not the stored schema's.
  private func rowLayout(of request: WireQuery, schema: EntitySchema, in call: Call) throws -> EntitySchema? {
    if let layout = request.layout {
      try check(layout, of: request.entity, in: call)
      return layout
    }
    guard let digest = request.layoutDigest else { return nil }
    return try storedLayout(named: digest, schema: schema, in: call)
  }

  /// `POST …/v1/count`.
  func count(_ call: Call) async throws -> Response {
    let request = try decode(WireQuery.self, from: call.body, reading: WireQueryJSON.read)
    let schema = try await schema(request.entity, layout: nil, in: call)
    var query = request.query
    query.sort = []
    query.offset = 0
    query.limit = nil
    let checked = try validated(query, schema: schema, in: call)
    let count = try await call.store.observed(.count, entity: request.entity) {
      try await call.store.backend.count(checked)
    }
    return try json(WireCount(count: count))
  }

  /// `POST …/v1/get`.
  func get(_ call: Call) async throws -> Response {
    let request = try decode(WireGet.self, from: call.body)
    let schema = try await schema(request.entity, layout: request.layout, in: call)
    guard request.ids.count <= configuration.maxRows else {
      throw CofferError(
        .invalidQuery, "A get names at most \(configuration.maxRows) ids on this server.",
        store: call.storeName,
        entity: request.entity)
    }
    let ids: [Value]
    do {
      ids = try request.ids.map { try QueryValidator.validate(id: $0, schema: schema) }
    } catch let error as CofferError {
      throw error.inStore(call.storeName)
    }
    let rows = try await call.store.observed(.get, entity: request.entity) {
      try await call.store.backend.get(entity: schema, ids: ids)
    }
    return try json(WireRows(rows: rows.map(\.values)))
  }

  /// `POST …/v1/aggregate`.
  func aggregate(_ call: Call) async throws -> Response {
    let request = try decode(WireAggregation.self, from: call.body)
    _ = try await schema(request.query.entity, layout: nil, in: call)
    var aggregation = request.aggregation
    aggregation.query.layout = nil
    try checkDepth(aggregation.query.filter, in: call, entity: aggregation.query.entity)
    let groups = try await call.store.aggregateRows(aggregation)
    return try json(WireGroups(groups: groups.map { WireGroup(key: $0.key, value: $0.value) }))
  }
}

/// Keyset paging for API users: the order's keys, and the filter for "after this row".
enum Keyset {
  /// The sort keys, then the id ascending (unless the sort already ends with the id).
  static func keys(_ sort: [Sort], schema: EntitySchema) -> [Sort] {
    let id = schema.idField.name
    if sort.contains(where: { $0.field == id }) {
      return Array(sort.prefix { $0.field != id }) + [sort.first { $0.field == id } ?? Sort(id)]
    }
    return sort + [Sort(id)]
  }

  /// The rows after the one whose keys hold `values`, in the order of `keys`: nulls first
  /// ascending, last descending, as every backend sorts.
  static func following(_ values: [Value], _ keys: [Sort]) -> Filter {
    var alternatives: [Filter] = []
    for index in keys.indices {
      var terms: [Filter] = []
      for earlier in 0..<index {
        terms.append(.compare(field: keys[earlier].field, op: .equal, value: values[earlier]))
      }
      let key = keys[index]
      let value = values[index]
      switch (key.ascending, value.isNull) {
      case (true, true): terms.append(.compare(field: key.field, op: .notEqual, value: .null))
      case (true, false): terms.append(.compare(field: key.field, op: .greater, value: value))
      case (false, true): terms.append(.or([]))
      case (false, false):
        terms.append(
          .or([
            .compare(field: key.field, op: .less, value: value),
            .compare(field: key.field, op: .equal, value: .null),
          ]))
      }
      alternatives.append(.and(terms))
    }
    return .or(alternatives)
  }
}
