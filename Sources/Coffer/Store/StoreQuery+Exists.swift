extension StoreQuery {
  /// Whether the query selects at least one value: `fetch()` would not be empty.
  ///
  /// It reads at most one row and decodes none, so it is cheaper than `count() > 0`, which
  /// counts every match:
  ///
  /// ```swift
  /// let hasUnread = try await store.query(Message.self).filter(\.readAt == nil).exists()
  /// ```
  ///
  /// The query's offset and limit apply (`offset(5).exists()` asks for a sixth match); its
  /// sort matters only with an offset.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` as ``fetch()`` does; the backend's error.
  public func exists() async throws -> Bool {
    let codec = try await store.codec(for: T.self)
    var checked = try validated(for: codec)
    if checked.limit == 0 { return false }
    if checked.offset == 0 { checked.sort = [] }
    checked.limit = 1
    var found = false
    try await read(checked) { _ in found = true }
    return found
  }
}

extension Store {
  /// Whether a query selects at least one row, after checking it against the prepared schema:
  /// the row API's ``StoreQuery/exists()``. Reads at most one row.
  @_spi(Backend) public func hasRows(_ query: Query) async throws -> Bool {
    let schema = try preparedSchema(query.entity)
    var checked = try rethrowing { try QueryValidator.validate(query, schema: schema) }
    if checked.limit == 0 { return false }
    if checked.offset == 0 { checked.sort = [] }
    checked.limit = 1
    var found = false
    try await readInTurn(.exists, checked.entity) { try await readSearching(checked) { _ in found = true } }
    return found
  }
}
