extension StoreQuery {
  /// The query's values as an asynchronous sequence that fetches one page at a time, for
  /// results too large to hold in memory.
  ///
  /// Pages follow the query's total order (ties by id), so a store that does not change while
  /// it is read yields every value exactly once. The query's own offset and limit are honoured.
  ///
  /// ```swift
  /// for try await message in store.query(Message.self).stream(pageSize: 500) {
  ///   export(message)
  /// }
  /// ```
  public func stream(pageSize: Int = 256) -> StoreStream<T> {
    StoreStream(query: self, pageSize: Swift.max(1, pageSize))
  }
}

/// The values of a ``StoreQuery`` fetched a page at a time; see ``StoreQuery/stream(pageSize:)``.
public struct StoreStream<T: Storable>: AsyncSequence, Sendable {
  /// The values.
  public typealias Element = T
  let query: StoreQuery<T>
  let pageSize: Int

  /// Starts reading at the first page.
  public func makeAsyncIterator() -> Iterator { Iterator(query: query, pageSize: pageSize) }

  /// Reads pages on demand.
  public struct Iterator: AsyncIteratorProtocol {
    let query: StoreQuery<T>
    let pageSize: Int
    var buffer: [T] = []
    var position = 0
    /// The sort keys' values, then the id, of the last value read: the next page starts after it.
    var after: [Value]?
    var remaining: Int?
    var finished = false

    init(query: StoreQuery<T>, pageSize: Int) {
      self.query = query
      self.pageSize = pageSize
      self.remaining = query.query.limit
    }

    /// The next value, fetching the next page when the current one is used up.
    public mutating func next() async throws -> T? {
      if position < buffer.count {
        defer { position += 1 }
        return buffer[position]
      }
      if finished { return nil }
      let size = remaining.map { Swift.min($0, pageSize) } ?? pageSize
      if size <= 0 {
        finished = true
        return nil
      }
      let page = try await query.page(after: after, size: size)
      buffer = page.values
      after = page.last
      position = 0
      remaining = remaining.map { $0 - buffer.count }
      if buffer.count < size || page.last == nil { finished = true }
      guard !buffer.isEmpty else { return nil }
      position = 1
      return buffer[0]
    }
  }
}

extension StoreQuery {
  /// One page of a stream: up to `size` values after the value whose sort keys and id are
  /// `after` (the query's own offset applies to the first page only), and the keys of the last
  /// value when the page is full.
  ///
  /// Pages start after the last value read, not at a count of values (keyset paging): a value
  /// inserted or deleted before the reader's position moves nothing, so the stream never
  /// yields a value twice or skips one that stayed, and no backend counts its way through the
  /// values already read.
  func page(after: [Value]?, size: Int) async throws -> (values: [T], last: [Value]?) {
    let codec = try await store.codec(for: T.self)
    var checked = try validated(for: codec)
    try refuseRelevanceKeys(checked.sort)
    let keys = Self.streamKeys(checked.sort, schema: codec.schema)
    let positions = keys.compactMap { codec.schema.position(of: $0.field) }
    if let after {
      checked.filter = checked.filter && Self.following(after, keys)
      checked.offset = 0
    }
    checked.limit = size
    var values: [T] = []
    values.reserveCapacity(Swift.min(size, Self.reservedAtMost))
    var last: [Value]?
    try await read(checked) { fields in
      values.append(try codec.decode(fields))
      if values.count == size { last = try positions.map { try fields.value(at: $0) } }
    }
    return (values, last)
  }

  /// Throws when a keyset page would follow a relevance order, which no field holds.
  func refuseRelevanceKeys(_ sort: [Sort]) throws {
    guard let key = sort.first(where: \.byRelevance) else { return }
    throw CofferError(
      .invalidQuery,
      "A stream or keyset page cannot follow the relevance order on '\(key.field)': page it with offset and limit.",
      store: store.backend.name, entity: T.entityName, field: key.field)
  }

  /// The keys that order a stream totally: the query's sort keys (each field once), then the
  /// id ascending unless it is sorted by already.
  static func streamKeys(_ sort: [Sort], schema: EntitySchema) -> [Sort] {
    var keys: [Sort] = []
    var seen: Set<String> = []
    for key in sort where seen.insert(key.field).inserted { keys.append(key) }
    if !seen.contains(schema.idField.name) { keys.append(Sort(schema.idField.name)) }
    return keys
  }

  /// The filter for values after one whose keys are `values`, in the order of `keys`: nulls
  /// come first ascending and last descending, as every backend sorts them.
  static func following(_ values: [Value], _ keys: [Sort]) -> Filter {
    var alternatives: [Filter] = []
    var equalSoFar: [Filter] = []
    for (key, value) in zip(keys, values) {
      let field = key.field
      let beyond: Filter
      switch (key.ascending, value.isNull) {
      case (true, true): beyond = .compare(field: field, op: .notEqual, value: .null)
      case (true, false): beyond = .compare(field: field, op: .greater, value: value)
      case (false, true): beyond = .or([])
      case (false, false):
        beyond = .or([
          .compare(field: field, op: .less, value: value), .compare(field: field, op: .equal, value: .null),
        ])
      }
      alternatives.append(equalSoFar.isEmpty ? beyond : .and(equalSoFar + [beyond]))
      equalSoFar.append(.compare(field: field, op: .equal, value: value))
    }
    return .or(alternatives)
  }
}
