extension ChangeSet {
  /// Something that must still hold when a batch is applied: a query must select exactly the
  /// rows it selected when they were read, or a given number of rows.
  ///
  /// A backend checks every precondition inside its write transaction, before the first
  /// operation, against the state the batch would change. When one does not hold, nothing is
  /// applied and the batch fails with ``CofferError/Code/conflict``. This is how
  /// ``Store/transaction(retries:_:)`` turns what its body read into a batch that cannot lose
  /// another writer's update.
  ///
  /// ```swift
  /// var changes = ChangeSet([.update(entity: "Account", row: debited)])
  /// changes.preconditions = [.unchanged(accountAsRead, in: accountSchema)]
  /// try await store.apply(changes)  // conflict if the account changed since it was read
  /// ```
  public struct Precondition: Sendable, Hashable {
    /// What the query must select.
    public enum Expectation: Sendable, Hashable {
      /// Exactly these rows, in this order, each equal field by field (doubles bit for bit).
      case rows([Row])
      /// This many rows, whatever they hold.
      case count(Int)
    }

    /// The rows the precondition is about, read in ``Query/layout``.
    public var query: Query
    /// What the query must select.
    public var expectation: Expectation

    /// A precondition that `query` selects what `expectation` says.
    public init(_ query: Query, _ expectation: Expectation) {
      self.query = query
      self.expectation = expectation
    }

    /// No row of the entity has this id.
    public static func absent(_ id: Value, in schema: EntitySchema) -> Precondition {
      Precondition(Query(lookingUp: id, in: schema), .count(0))
    }

    /// A row of the entity has this id, whatever it holds.
    public static func present(_ id: Value, in schema: EntitySchema) -> Precondition {
      Precondition(Query(lookingUp: id, in: schema), .count(1))
    }

    /// The row with this row's id is stored and holds exactly these values.
    public static func unchanged(_ row: Row, in schema: EntitySchema) -> Precondition {
      Precondition(Query(lookingUp: row[schema.idPosition], in: schema), .rows([row]))
    }

    /// The row with this id is stored and matches `filter`.
    public static func matching(_ id: Value, _ filter: Filter, in schema: EntitySchema) -> Precondition {
      var query = Query(lookingUp: id, in: schema)
      query.filter = query.filter && filter
      return Precondition(query, .count(1))
    }

    /// Checks the rows the backend's query selects now, inside its write transaction.
    ///
    /// - Throws: ``CofferError/Code/conflict`` naming the entity and, when one row tells the
    ///   difference, its id.
    @_spi(Backend) public func verify(_ selected: [Row], store: String?) throws {
      switch expectation {
      case .count(let count):
        if selected.count == count { return }
        let what = count == 0 ? "was stored by another writer" : "was removed or changed by another writer"
        throw Self.conflict(entity: query.entity, id: subjectID, store: store, what: what)
      case .rows(let expected):
        if selected.count == expected.count, zip(selected, expected).allSatisfy({ $0.isIdentical(to: $1) }) {
          return
        }
        guard let idPosition = query.layout?.idPosition else {
          throw Self.conflict(entity: query.entity, id: nil, store: store, what: "changed")
        }
        var now: [Value: Row] = [:]
        for row in selected { now[row[idPosition]] = row }
        for row in expected {
          let id = row[idPosition]
          guard let current = now.removeValue(forKey: id) else {
            throw Self.conflict(entity: query.entity, id: id, store: store, what: "was removed")
          }
          if !current.isIdentical(to: row) {
            throw Self.conflict(entity: query.entity, id: id, store: store, what: "was changed")
          }
        }
        let added = selected.first { now[$0[idPosition]] != nil }
        throw Self.conflict(entity: query.entity, id: added?[idPosition], store: store, what: "was added")
      }
    }

    /// The one id the query is about (a lookup by id, or an id equality among and-ed terms).
    var subjectID: Value? {
      guard let layout = query.layout else { return nil }
      if let id = query.lookedUpID(in: layout) { return id }
      guard case .and(let terms) = query.filter else { return nil }
      for case .compare(layout.idField.name, .equal, let id) in terms where !id.isNull { return id }
      return nil
    }

    /// The error for a precondition that no longer holds.
    @_spi(Backend) public static func conflict(entity: String, id: Value?, store: String?, what: String)
      -> CofferError
    {
      let advice =
        "Nothing in the batch was applied. Read it again and decide anew "
        + "(store.transaction and store.modify do this for you)."
      guard let id else {
        return CofferError(
          .conflict,
          "The \(entity) rows this batch depends on changed since they were read (a row was added, removed or changed). \(advice)",
          store: store, entity: entity)
      }
      return CofferError(
        .conflict, "The \(entity) with id \(id) \(what) since it was read. \(advice)", store: store,
        entity: entity, id: id)
    }
  }
}

extension Row {
  /// Whether two rows hold the same values field by field, doubles compared bit for bit (so
  /// `-0.0` and `0.0` differ, as they are stored).
  func isIdentical(to other: Row) -> Bool {
    guard values.count == other.values.count else { return false }
    for (a, b) in zip(values, other.values) {
      switch (a, b) {
      case (.double(let x), .double(let y)): if x.bitPattern != y.bitPattern { return false }
      default: if a != b { return false }
      }
    }
    return true
  }
}
