/// Where a keyset page starts: the sort keys and id of the value before it. Make one with
/// ``StoreQuery/cursor(after:)`` or take ``KeysetPage/next``; see ``StoreQuery/page(after:size:)``.
///
/// A cursor is a plain value: keep it, compare it, or encode it (it is `Codable`) to hand to a
/// client and back. It holds the values of the sort fields of one stored value, so treat it as
/// data of that value. It works only with a query sorted the same way.
public struct PageCursor: Sendable, Hashable, Codable {
  /// The fields that order the pages, the id last.
  public let fields: [String]
  /// Whether each of ``fields`` sorts ascending.
  public let ascending: [Bool]
  /// The values of ``fields`` of the value the page starts after.
  public let values: [Value]

  init(keys: [Sort], values: [Value]) {
    self.fields = keys.map(\.field)
    self.ascending = keys.map(\.ascending)
    self.values = values
  }

  /// The sort keys the cursor was made for.
  var keys: [Sort] { zip(fields, ascending).map { Sort($0, ascending: $1) } }
}

/// Values after a ``PageCursor`` and the cursor for the page after them; see
/// ``StoreQuery/page(after:size:)``.
public struct KeysetPage<T: Storable>: Sendable {
  /// The values, in the query's order.
  public let items: [T]
  /// Where the next page starts, or `nil` when no value followed this page when it was read.
  public let next: PageCursor?
}

extension StoreQuery {
  /// Up to `size` values that follow `cursor` in the query's order (from the start when it is
  /// `nil`), and a cursor for the next page: keyset ("after this row") paging.
  ///
  /// A page starts after the sort keys and id of a value, not at a count of values, so values
  /// inserted or deleted before it shift nothing: reading page after page never repeats a value
  /// or skips one that stayed, however the data changes between pages. The query's total order
  /// (its sort keys, then id) decides what "after" means; this is the paging
  /// ``stream(pageSize:)`` uses.
  ///
  /// ```swift
  /// let query = store.query(Message.self).filter(\.threadID == t).sort(\.date, .descending)
  /// var page = try await query.page(after: nil, size: 50)
  /// show(page.items)
  /// while let next = page.next {
  ///   page = try await query.page(after: next, size: 50)
  ///   show(page.items)
  /// }
  /// ```
  ///
  /// The page replaces the query's offset and limit. To look for values that arrived after the
  /// last one shown, ask for the page after ``cursor(after:)`` of it.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a size below 1, a cursor made for a query
  ///   sorted another way, or as ``fetch()`` does.
  public func page(after cursor: PageCursor?, size: Int) async throws -> KeysetPage<T> {
    guard size > 0 else {
      throw CofferError(
        .invalidQuery, "A keyset page needs a size of at least 1.", store: store.backend.name,
        entity: T.entityName)
    }
    let codec = try await store.codec(for: T.self)
    try refuseRelevanceKeys(query.sort)
    let keys = Self.streamKeys(query.sort, schema: codec.schema)
    var paged = self
    paged.query.offset = 0
    paged.query.limit = size + 1
    if let cursor {
      guard cursor.keys == keys, cursor.values.count == keys.count else {
        throw CofferError(
          .invalidQuery,
          "The page cursor was made for a query sorted by other fields; use a cursor from the same query.",
          store: store.backend.name, entity: T.entityName)
      }
      paged.query.filter = paged.query.filter && Self.following(cursor.values, keys)
    }
    let checked = try paged.validated(for: codec)
    let positions = try keys.map { try position(of: $0.field, in: codec.schema) }
    var items: [T] = []
    items.reserveCapacity(Swift.min(size, Self.reservedAtMost))
    var last: [Value] = []
    var more = false
    try await read(checked) { fields in
      guard items.count < size else {
        more = true
        return
      }
      items.append(try codec.decode(fields))
      if items.count == size { last = try positions.map { try fields.value(at: $0) } }
    }
    return KeysetPage(items: items, next: more ? PageCursor(keys: keys, values: last) : nil)
  }

  /// The cursor of the page that starts right after `value` in the query's order: to continue
  /// from the last value a list shows, or to ask what arrived after it.
  ///
  /// - Throws: the row codec's error when the value cannot be encoded.
  public func cursor(after value: T) async throws -> PageCursor {
    let codec = try await store.codec(for: T.self)
    let keys = Self.streamKeys(query.sort, schema: codec.schema)
    let row = try store.rethrowing {
      try QueryValidator.validate(try codec.encode(value), schema: codec.schema)
    }
    let values = try keys.map { row[try position(of: $0.field, in: codec.schema)] }
    return PageCursor(keys: keys, values: values)
  }

  /// A sort field's position, or the error for a field the schema does not have.
  private func position(of field: String, in schema: EntitySchema) throws -> Int {
    guard let position = schema.position(of: field) else {
      throw CofferError(
        .invalidQuery, "\(T.entityName) has no stored field '\(field)' to sort by.",
        store: store.backend.name,
        entity: T.entityName, field: field)
    }
    return position
  }
}
