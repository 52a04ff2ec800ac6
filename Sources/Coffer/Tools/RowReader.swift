/// How the data tools read a store: through one snapshot when the backend has
/// ``SnapshotReading`` (so that a copy, an export and their digests describe one
/// state), through the backend otherwise — an entity at a time, in id order, a page at a time.
package struct RowReader: Sendable {
  package let read: @Sendable (Query, (any StoredFields) throws -> Void) async throws -> Void
  package let count: @Sendable (Query) async throws -> Int
  /// Gives back memory the read left behind (``CachedMemoryReleasing/releaseCachedMemory()``): called
  /// every ``releaseInterval`` rows or so, and when a read of a whole entity ends.
  package var release: @Sendable () -> Void = {}

  /// How many rows a whole-entity read hands over between calls to ``release``.
  package static let releaseInterval = 32_768

  /// Calls ``release`` once every ``releaseInterval`` rows counted.
  package struct ReleaseSchedule {
    let release: @Sendable () -> Void
    private var rows = 0

    package init(_ release: @escaping @Sendable () -> Void) { self.release = release }

    package mutating func count(_ more: Int) {
      rows += more
      if rows >= RowReader.releaseInterval {
        release()
        rows = 0
      }
    }
  }

  /// About the most bytes of values a page holds: rows with large values come in pages of
  /// fewer rows, so memory stays bounded whatever the rows hold.
  package static let pageBytes = 16 << 20

  /// Reads every row of an entity with an id after `start` (all of them when it is `nil`) in
  /// id order, handing `body` one page of at most `pageSize` rows at a time, each cut short
  /// once its values pass ``pageBytes``: keyset paging, so a page costs the same wherever it
  /// falls. The next page is read while `body` works on this one, so memory holds two pages.
  package func pages(
    of schema: EntitySchema, after start: Value? = nil, pageSize: Int, _ body: ([Row]) async throws -> Void
  ) async throws {
    var page = try await self.page(of: schema, after: start, limit: pageSize)
    var schedule = ReleaseSchedule(release)
    while let lastRow = page.rows.last {
      let more = page.isCut || page.rows.count == pageSize
      let after = lastRow[schema.idPosition]
      async let next = more ? self.page(of: schema, after: after, limit: pageSize) : Page()
      try await body(page.rows)
      schedule.count(page.rows.count)
      page = try await next
    }
    release()
  }

  /// Rows read for one page, and about how many bytes their values take.
  package struct Page: Sendable {
    var rows: [Row] = []
    var bytes = 0
    /// Whether the page stopped at ``RowReader/pageBytes`` before its row limit.
    var isCut = false
  }

  /// Thrown from a read's visitor to stop it when a page is full.
  private struct PageFull: Error {}

  /// The first `limit` rows with an id after `start`, in id order.
  private func page(of schema: EntitySchema, after start: Value?, limit: Int) async throws -> Page {
    let idField = schema.idField.name
    var query = Query(
      entity: schema.name, filter: start.map { .compare(field: idField, op: .greater, value: $0) } ?? .all,
      sort: [Sort(idField)], limit: limit)
    query.layout = schema
    var page = Page()
    page.rows.reserveCapacity(min(limit, 16_384))
    do {
      try await read(query) { fields in
        let row = try Row(fields)
        page.bytes += Self.size(of: row)
        page.rows.append(row)
        if page.bytes >= Self.pageBytes, page.rows.count < limit { throw PageFull() }
      }
    } catch is PageFull {
      page.isCut = true
    }
    return page
  }

  /// About how many bytes a row's values take.
  package static func size(of row: Row) -> Int {
    var bytes = 0
    for value in row.values {
      switch value {
      case .string(let text): bytes += 16 + text.utf8.count
      case .bytes(let data), .document(let data): bytes += 16 + data.count
      default: bytes += 16
      }
    }
    return bytes
  }

  /// Reads what a query selects, as ``read`` does, calling ``release`` every
  /// ``releaseInterval`` rows and at the end: for the reads of a whole entity.
  package func readReleasing(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    var schedule = ReleaseSchedule(release)
    try await read(query) { fields in
      try visit(fields)
      schedule.count(1)
    }
    release()
  }

  /// The number of rows of an entity.
  package func count(of schema: EntitySchema) async throws -> Int { try await count(Self.all(of: schema)) }

  /// The digests of some entities.
  package func digest(of schemas: [EntitySchema]) async throws -> StoreDigest {
    var digests: [EntityDigest] = []
    for schema in schemas {
      var digester = RowDigester(schema: schema)
      try await readReleasing(Self.all(of: schema)) { try digester.add($0) }
      digests.append(digester.digest)
    }
    return StoreDigest(entities: digests)
  }

  /// A query for every row of an entity, in its stored layout.
  package static func all(of schema: EntitySchema) -> Query {
    var query = Query(entity: schema.name)
    query.layout = schema
    return query
  }
}

extension Store {
  /// Runs `body` with a reader of one state of the store when its backend keeps snapshots, of
  /// the store as it goes otherwise; errors name the store.
  package func withRowReader<R>(_ body: (RowReader) async throws -> R) async throws -> R {
    let backend = self.backend
    if let reading = backend as? any SnapshotReading {
      return try await rethrowing {
        try await reading.withSnapshot { snapshot in
          try await body(
            RowReader(
              read: { try await snapshot.read($0, $1) }, count: { try await snapshot.count($0) },
              release: { backend.releaseCachedMemoryIfAny() }))
        }
      }
    }
    return try await rethrowing {
      try await body(
        RowReader(
          read: { try await backend.read($0, $1) }, count: { try await backend.count($0) },
          release: { backend.releaseCachedMemoryIfAny() }))
    }
  }
}
