/// One numbered page of a query's result and the total a pager shows beside it; see
/// ``StoreQuery/page(size:number:)``.
public struct QueryPage<T: Storable>: Sendable {
  /// The values on the page, in the query's order; empty past the last page.
  public let items: [T]
  /// The page's number, counted from 1.
  public let number: Int
  /// The most values a page holds.
  public let size: Int
  /// How many values the query selects in all pages.
  public let total: Int

  /// How many pages the total fills: `0` when nothing matches.
  public var pageCount: Int { total / size + (total % size == 0 ? 0 : 1) }
  /// Whether a page follows this one.
  public var hasNextPage: Bool { number < pageCount }
}

extension StoreQuery {
  /// Page `number` (counted from 1) of `size` values of the query's result, with the total a
  /// pager needs, read in one state of the store: on a backend with snapshots (every built-in
  /// one) the values and the total come from one snapshot, so they agree even while others write.
  ///
  /// ```swift
  /// let page = try await store.query(Message.self).sort(\.date, .descending).page(size: 20, number: 3)
  /// show(page.items, "page \(page.number) of \(page.pageCount), \(page.total) messages")
  /// ```
  ///
  /// The page replaces the query's own offset and limit. Numbered pages suit a pager over data
  /// that changes little; to scroll through data that grows while it is read, use keyset pages
  /// (``page(after:size:)``), which never repeat or skip a value.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a size or number below 1, or as
  ///   ``fetch()`` does.
  public func page(size: Int, number: Int) async throws -> QueryPage<T> {
    guard size > 0, number > 0 else {
      throw CofferError(
        .invalidQuery, "A page needs a size and a number of at least 1; pages are numbered from 1.",
        store: store.backend.name, entity: T.entityName)
    }
    let (offset, overflow) = (number - 1).multipliedReportingOverflow(by: size)
    var slice = self
    slice.query.offset = overflow ? Int.max : offset
    slice.query.limit = size
    var whole = self
    whole.query.offset = 0
    whole.query.limit = nil
    func read(_ slice: StoreQuery, _ whole: StoreQuery) async throws -> QueryPage<T> {
      let total = try await whole.count()
      let items = try await slice.fetch()
      return QueryPage(items: items, number: number, size: size, total: total)
    }
    guard source == nil, store.backend is any SnapshotReading else {
      return try await read(slice, whole)
    }
    return try await store.snapshot { snapshot in
      try await read(slice.reading(snapshot), whole.reading(snapshot))
    }
  }

  /// The query, reading from a snapshot.
  func reading(_ snapshot: StoreSnapshot) -> StoreQuery {
    var copy = self
    copy.source = .snapshot(snapshot.reader)
    return copy
  }
}
