/// A query for values of one type, built step by step and run with ``fetch()``, ``first()``,
/// ``count()``, ``stream(pageSize:)``, ``observe()`` or ``delete()``.
///
/// On a ``KeyPathStorable`` type (every `@Storable` one), filter and sort with key paths:
///
/// ```swift
/// let unread = try await store.query(Message.self)
///   .filter(\.threadID == thread.id && \.readAt == nil)
///   .sort(\.date, .descending)
///   .limit(20)
///   .fetch()
/// ```
///
/// With field names known only at run time, pass a ``Filter`` built with ``FieldRef`` and
/// ``Sort`` keys: `.filter(FieldRef("threadID") == 7).sort([Sort("date", ascending: false)])`.
///
/// Each step returns a new query; a query is a value and can be kept and reused.
public struct StoreQuery<T: Storable>: Sendable {
  /// The store it runs on.
  public let store: Store
  /// The untyped query it stands for (entity, filter, sort, slice).
  @_spi(Backend) public internal(set) var query: Query
  /// Why the query cannot run: a key path in it reads no stored field.
  @usableFromInline var keyPathError: CofferError?
  /// Where it reads when not from the store directly: a snapshot or a transaction.
  var source: QuerySource?

  @usableFromInline
  init(store: Store) {
    self.store = store
    self.query = Query(entity: T.entityName)
  }

  /// Also requires `filter` (combined with `&&` with earlier filters).
  public func filter(_ filter: Filter) -> StoreQuery {
    var copy = self
    copy.query.filter = query.filter && filter
    return copy
  }

  /// Orders by these keys after any given before (ties always end by id ascending).
  public func sort(_ keys: [Sort]) -> StoreQuery {
    var copy = self
    copy.query.sort += keys
    return copy
  }

  /// At most `count` values.
  public func limit(_ count: Int) -> StoreQuery {
    var copy = self
    copy.query.limit = count
    return copy
  }

  /// Skips the first `count` values.
  public func offset(_ count: Int) -> StoreQuery {
    var copy = self
    copy.query.offset = count
    return copy
  }

  /// Adds a key path's error, to be thrown when the query runs.
  func failing(with error: CofferError?) -> StoreQuery {
    var copy = self
    copy.keyPathError = keyPathError ?? error
    return copy
  }

  /// The query checked against the type's schema, ready for the backend: the one entry point
  /// that ``fetch()``, ``count()``, ``delete()``, ``stream(pageSize:)`` and ``observe()`` all
  /// go through.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a key path that reads no stored field, a
  ///   field the schema does not have, or a value of the wrong kind.
  func validated(for codec: RowCodec<T>) throws -> Query {
    try store.rethrowing {
      if let keyPathError { throw keyPathError }
      return try QueryValidator.validate(query, schema: codec.schema)
    }
  }

  /// The most room ``fetch()`` reserves up front for a query with a limit.
  static var reservedAtMost: Int { 1_024 }

  /// Runs the query.
  ///
  /// - Returns: the values it selects, in its order (id ascending when it has no sort), after
  ///   its offset and up to its limit; an empty array when none match.
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the schema does not have, a value
  ///   of the wrong kind or a key path that reads no stored field; the backend's error.
  @inlinable
  public func fetch() async throws -> [T] {
    let codec = try await store.codec(for: T.self)
    var values: [T] = []
    try await read(validating: codec, reserve: { values.reserveCapacity($0) }) {
      values.append(try codec.decode($0))
    }
    return values
  }

  /// Checks the query against the codec's schema, then reads its rows into `visit`: the body
  /// of ``fetch()`` past its generic decoding. A page (a limit) gets its room at once through
  /// `reserve` rather than growing through every power of two.
  @usableFromInline
  func read(
    validating codec: RowCodec<T>, reserve: (Int) -> Void, _ visit: (StoredRow) throws -> Void
  ) async throws {
    let checked = try validated(for: codec)
    if let limit = checked.limit, limit > 0 { reserve(Swift.min(limit, Self.reservedAtMost)) }
    try await read(checked) { try visit(StoredRow($0)) }
  }

  /// Reads a checked query's rows from where this query reads: the store, a snapshot, or the
  /// store for a transaction, which remembers them.
  func read(_ checked: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try await store.readInTurn(.fetch, checked.entity) {
      if TextSearch.searches(checked) {
        switch source {
        case nil: try await store.readSearching(checked, visit)
        case .snapshot(let reader):
          try await TextSearch.read(
            checked, nativeMatching: store.matchesTextNatively, index: reader as? any TextIndexReading,
            using: readSource, visit)
        case .transaction:
          // A transaction's reads see its own writes, which no index holds.
          try await TextSearch.read(
            checked, nativeMatching: store.matchesTextNatively, using: readSource, visit)
        }
      } else {
        try await readSource(checked, visit)
      }
    }
  }

  /// Reads a query from where this query reads, as it is.
  func readSource(_ checked: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    switch source {
    case nil: try await store.backend.read(checked, visit)
    case .snapshot(let reader): try await reader.read(checked, visit)
    case .transaction(let transaction): try await transaction.read(checked, visit)
    }
  }

  /// Applies a change made by query (a delete or an update): now, or in the transaction the
  /// query reads for. A snapshot's queries cannot change anything.
  func change(_ operation: ChangeSet.Operation, layout: EntitySchema) async throws -> ChangeSummary {
    switch source {
    case nil:
      return try await store.apply(ChangeSet([operation], layouts: layout.layouts))
    case .snapshot:
      throw CofferError(
        .unsupported, "A snapshot only reads. Change the store through the store or a transaction.",
        store: store.backend.name, entity: layout.name)
    case .transaction(let transaction):
      try transaction.write(operation, layout: layout)
      return ChangeSummary()
    }
  }

  /// Runs the query for one value (its limit becomes 1; its offset still applies).
  ///
  /// - Returns: the first value in the query's order, or `nil` when it selects none.
  public func first() async throws -> T? { try await limit(1).fetch().first }

  /// Counts what the query selects without reading the values. Sort does not matter; offset and
  /// limit do: a query with `limit(20)` counts at most 20.
  ///
  /// - Returns: how many values ``fetch()`` would return.
  public func count() async throws -> Int {
    let codec = try await store.codec(for: T.self)
    let validated = try validated(for: codec)
    // The store's count resolves a search itself, on one snapshot where the backend has text
    // indexes.
    guard let source else { return try await store.countChecked(validated) }
    var snapshotIndex: (any TextIndexReading)?
    if case .snapshot(let reader) = source { snapshotIndex = reader as? any TextIndexReading }
    let checked = try await TextSearch.resolvingFilter(
      validated, nativeMatching: store.matchesTextNatively, index: snapshotIndex, using: readSource)
    var whole = checked
    whole.sort = []
    whole.offset = 0
    whole.limit = nil
    let total: Int
    switch source {
    case .snapshot(let reader):
      total = try await store.readInTurn(.count, whole.entity) { try await reader.count(whole) }
    case .transaction(let transaction): total = try await transaction.count(whole)
    }
    return checked.slice(ofCount: total)
  }

  /// Removes every value the query's filter selects, in one atomic change. Sort, offset and
  /// limit are ignored: `query.limit(1).delete()` still removes every match. In a
  /// transaction the delete waits for the commit and returns 0.
  ///
  /// ```swift
  /// let removed = try await store.query(Message.self).filter(\.threadID == 7).delete()
  /// ```
  ///
  /// - Returns: how many values were removed; `0` when none matched.
  @discardableResult
  public func delete() async throws -> Int {
    let codec = try await store.codec(for: T.self)
    let checked = try await TextSearch.resolvingFilter(
      try validated(for: codec), nativeMatching: store.matchesTextNatively, using: readSource)
    return try await change(
      .deleteMatching(entity: codec.schema.name, filter: checked.filter), layout: codec.schema
    )
    .deleted
  }
}

extension Store {
  /// A query over all values of a type, ordered by id until sorted otherwise.
  @inlinable
  public func query<T: Storable>(_ type: T.Type) -> StoreQuery<T> { StoreQuery(store: self) }
}
