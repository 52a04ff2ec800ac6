/// How the data tools read a store: through one snapshot when the backend has
/// ``BackendCapabilities/snapshots`` (so that a copy, an export and their digests describe one
/// state), through the backend otherwise — an entity at a time, in id order, a page at a time.
struct RowReader {
  let read: (Query, (any StoredFields) throws -> Void) async throws -> Void
  let count: (Query) async throws -> Int

  /// Reads every row of an entity with an id after `start` (all of them when it is `nil`) in
  /// id order, handing `body` one page of at most `pageSize` rows at a time: keyset paging,
  /// so a page costs the same wherever it falls and memory holds one page.
  func pages(
    of schema: EntitySchema, after start: Value? = nil, pageSize: Int, _ body: ([Row]) async throws -> Void
  ) async throws {
    let idField = schema.idField.name
    var last = start
    while true {
      var query = Query(
        entity: schema.name, filter: last.map { .compare(field: idField, op: .greater, value: $0) } ?? .all,
        sort: [Sort(idField)], limit: pageSize)
      query.layout = schema
      var rows: [Row] = []
      rows.reserveCapacity(pageSize)
      try await read(query) { rows.append(try Self.row(of: $0)) }
      guard let lastRow = rows.last else { return }
      last = lastRow[schema.idPosition]
      try await body(rows)
      if rows.count < pageSize { return }
    }
  }

  /// The number of rows of an entity.
  func count(of schema: EntitySchema) async throws -> Int { try await count(Self.all(of: schema)) }

  /// The digests of some entities.
  func digest(of schemas: [EntitySchema]) async throws -> StoreDigest {
    var digests: [EntityDigest] = []
    for schema in schemas {
      var digester = RowDigester(schema: schema)
      try await read(Self.all(of: schema)) { try digester.add($0) }
      digests.append(digester.digest)
    }
    return StoreDigest(entities: digests)
  }

  /// A query for every row of an entity, in its stored layout.
  static func all(of schema: EntitySchema) -> Query {
    var query = Query(entity: schema.name)
    query.layout = schema
    return query
  }

  /// The row the fields hold.
  static func row(of fields: any StoredFields) throws -> Row {
    if let row = fields.row { return row }
    var values: [Value] = []
    values.reserveCapacity(fields.count)
    for position in 0..<fields.count { values.append(try fields.value(at: position)) }
    return Row(values)
  }
}

extension Store {
  /// Runs `body` with a reader of one state of the store when its backend keeps snapshots, of
  /// the store as it goes otherwise; errors name the store.
  func withRowReader<R>(_ body: (RowReader) async throws -> R) async throws -> R {
    let backend = self.backend
    if backend.capabilities.contains(.snapshots) {
      return try await rethrowing {
        try await backend.withSnapshot { snapshot in
          try await body(
            RowReader(read: { try await snapshot.read($0, $1) }, count: { try await snapshot.count($0) }))
        }
      }
    }
    return try await rethrowing {
      try await body(
        RowReader(read: { try await backend.read($0, $1) }, count: { try await backend.count($0) }))
    }
  }
}
