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
    StoreStream(query: self, pageSize: max(1, pageSize))
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
    var nextOffset: Int
    var remaining: Int?
    var finished = false

    init(query: StoreQuery<T>, pageSize: Int) {
      self.query = query
      self.pageSize = pageSize
      self.nextOffset = query.query.offset
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
      if size == 0 {
        finished = true
        return nil
      }
      buffer = try await query.offset(nextOffset).limit(size).fetch()
      position = 0
      nextOffset += buffer.count
      remaining = remaining.map { $0 - buffer.count }
      if buffer.count < size { finished = true }
      guard !buffer.isEmpty else { return nil }
      position = 1
      return buffer[0]
    }
  }
}
