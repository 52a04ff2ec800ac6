/// A query for parents that also fetches, for each parent, the children that refer to it: eager
/// loading in a bounded number of backend calls, never one per parent.
///
/// Made by `including(_:sort:limit:)`; run with
/// ``fetch()``. It reads the parents the query selects, then the children of up to
/// ``chunkSize`` parents per call, with one `isIn` filter on the referring field. With a
/// per-parent limit it never reads a child it does not return: a backend that adopts
/// ``LimitPerValueReading`` (SQLite, PostgreSQL) keeps each parent's first children itself, a
/// chunk of parents per call; elsewhere, and for at most ``parentsQueriedOneByOne`` parents,
/// each parent's first children come from a limited call of its own.
///
/// ```swift
/// let threads = try await store.query(ChatThread.self)
///   .sort(\.title)
///   .including(\ChatMessage.threadID, sort: [Sort("date", ascending: false)], limit: 50)
///   .fetch()
/// for (thread, newest) in threads { print(thread.title, newest.count) }
/// ```
public struct IncludingQuery<Parent: Storable, Child: Storable>: Sendable {
  /// How many parents' children one call reads.
  @_spi(Backend) public static var chunkSize: Int { 500 }
  /// Up to this many parents, a query with a per-parent limit reads each parent's children
  /// with a call of its own, limited in the store, instead of every child of every parent.
  @_spi(Backend) public static var parentsQueriedOneByOne: Int { 8 }

  /// The parents' query.
  let parents: StoreQuery<Parent>
  /// The children's stored field that holds a parent's id.
  let field: String
  /// The children's order within each parent (ties by id ascending).
  let sort: [Sort]
  /// At most this many children per parent, or all when `nil`.
  let limit: Int?
  /// Which children are read at all (``Filter/all`` for every child of a parent).
  let childFilter: Filter
  let error: CofferError?

  init(
    parents: StoreQuery<Parent>, field: String, sort: [Sort], limit: Int?, childFilter: Filter = .all,
    error: CofferError?
  ) {
    self.parents = parents
    self.field = field
    self.sort = sort
    self.limit = limit
    self.childFilter = childFilter
    self.error = error
  }

  /// Each parent the query selects, in its order, with its children in the order the children's query gives.
  ///
  /// A per-parent limit is applied in the store: per chunk of parents on a backend that
  /// adopts ``LimitPerValueReading``, else (and for a few parents) with one limited call per
  /// parent.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when the key path reads no stored field, or
  ///   what ``StoreQuery/fetch()`` throws.
  public func fetch() async throws -> [(parent: Parent, children: [Child])] {
    if let error { throw error }
    if let limit, limit < 0 {
      throw CofferError(
        .invalidQuery, "A per-parent limit must not be negative.", entity: Child.entityName, field: field)
    }
    let found = try await parents.fetch()
    let store = parents.store
    let codec = try await store.codec(for: Child.self)
    guard let position = codec.schema.position(of: field) else {
      throw CofferError(
        .invalidQuery, "\(Child.entityName) has no stored field '\(field)' that could refer to a parent.",
        store: store.backend.name, entity: Child.entityName, field: field)
    }
    // Children by the stored value of their reference, which is the parent's stored id.
    var children: [Value: [Child]] = [:]
    // With a per-parent limit, a backend that keeps each parent's first rows itself reads a
    // chunk of parents per call; otherwise (and for a few parents) one limited query per parent
    // reads only the rows it keeps, in the order an index on the reference (and the sort)
    // gives — a thread's newest 50 messages, not all of them.
    var perValue: (backend: any LimitPerValueReading, limit: Int)?
    if let limit {
      if found.count > Self.parentsQueriedOneByOne, let backend = store.backend as? any LimitPerValueReading {
        perValue = (backend, limit)
      } else {
        for parent in found {
          let id = parent.id.storedValue
          guard children[id] == nil else { continue }
          children[id] = try await store.query(Child.self)
            .filter(.compare(field: field, op: .equal, value: id) && childFilter).sort(sort).limit(limit)
            .fetch()
        }
        return found.map { ($0, children[$0.id.storedValue] ?? []) }
      }
    }
    var start = 0
    while start < found.count {
      let chunk = found[start..<min(start + Self.chunkSize, found.count)]
      start += chunk.count
      var query = Query(
        entity: Child.entityName, filter: .isIn(field, chunk.map(\.id.storedValue)) && childFilter, sort: sort
      )
      guard let perValue else {
        for row in try await store.fetchRows(query) {
          children[row[position], default: []].append(try codec.decode(row))
        }
        continue
      }
      query.layout = codec.schema
      let checked = try store.rethrowing { try QueryValidator.validate(query, schema: codec.schema) }
      try await store.readInTurn(.fetch, checked.entity) {
        try await perValue.backend.read(checked, first: perValue.limit, per: field) { fields in
          children[try fields.value(at: position), default: []].append(try codec.decode(fields))
        }
      }
    }
    return found.map { ($0, children[$0.id.storedValue] ?? []) }
  }

  /// The children of each parent, by parent id (a parent with none maps to an empty array).
  public func grouped() async throws -> [Parent.ID: [Child]] {
    var result: [Parent.ID: [Child]] = [:]
    for (parent, children) in try await fetch() { result[parent.id] = children }
    return result
  }
}

extension StoreQuery {
  /// Also fetches, for each value, the `Child` values whose stored field `reference` holds its
  /// id (see ``IncludingQuery``): the spelling for a child type that is `Storable` through
  /// `Codable` alone, whose properties have no key paths Coffer can name.
  ///
  /// ```swift
  /// let threads = try await store.query(Thread.self)
  ///   .including(Note.self, by: "threadID", sort: [Sort("date", ascending: false)], limit: 5)
  ///   .fetch()
  /// ```
  ///
  /// - Parameters:
  ///   - child: the children's type.
  ///   - reference: the children's stored field that holds a parent's id.
  ///   - sort: the children's order within each parent; by id when empty.
  ///   - limit: at most this many children per parent; all when `nil`.
  public func including<Child: Storable>(
    _ child: Child.Type, by reference: String, sort: [Sort] = [], limit: Int? = nil
  ) -> IncludingQuery<T, Child> {
    IncludingQuery(parents: self, field: reference, sort: sort, limit: limit, error: nil)
  }
}

extension StoreQuery {
  /// Also fetches, for each value, the `Child` values whose `reference` holds its id, read by
  /// the children's query that `children` shapes with key paths: its sort orders each parent's
  /// children and its filter chooses which are read (see ``IncludingQuery``).
  ///
  /// ```swift
  /// let threads = try await store.query(ChatThread.self)
  ///   .including(\ChatMessage.threadID, limit: 5) { $0.filter(\.isRead == false).sort(\.date, .descending) }
  ///   .fetch()   // each thread with its newest 5 unread messages
  /// ```
  ///
  /// The children's query's offset and limit are not used: `limit` is per parent.
  ///
  /// - Parameters:
  ///   - reference: the children's key path to a parent's id.
  ///   - limit: at most this many children per parent; all when `nil`.
  ///   - children: shapes the children's query: its filter and sort apply.
  public func including<Child: KeyPathStorable>(
    _ reference: KeyPath<Child, T.ID>, limit: Int? = nil,
    _ children: (StoreQuery<Child>) -> StoreQuery<Child> = { $0 }
  ) -> IncludingQuery<T, Child> {
    shapedIncluding(reference, limit: limit, children)
  }

  /// The same, for an optional reference: children whose reference is nil belong to no
  /// parent.
  public func including<Child: KeyPathStorable>(
    _ reference: KeyPath<Child, T.ID?>, limit: Int? = nil,
    _ children: (StoreQuery<Child>) -> StoreQuery<Child> = { $0 }
  ) -> IncludingQuery<T, Child> {
    shapedIncluding(reference, limit: limit, children)
  }

  /// The closure forms of `including`: the children's query `children` shapes gives the sort
  /// and filter.
  private func shapedIncluding<Child: KeyPathStorable>(
    _ reference: PartialKeyPath<Child>, limit: Int?, _ children: (StoreQuery<Child>) -> StoreQuery<Child>
  ) -> IncludingQuery<T, Child> {
    let shaped = children(store.query(Child.self))
    let field = Child.storedFieldName(for: reference)
    return IncludingQuery(
      parents: self, field: field ?? "", sort: shaped.query.sort, limit: limit,
      childFilter: shaped.query.filter,
      error: field == nil ? Child.notStored(reference) : shaped.keyPathError)
  }
}
