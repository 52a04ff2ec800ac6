extension StoreQuery {
  /// Changes fields of every value the query's filter selects, inside the backend, in one
  /// atomic change: each value as it is stored when the change is applied, so a concurrent
  /// update is never lost. Sort, offset and limit are ignored. In a transaction the change
  /// waits for the commit and returns 0.
  ///
  /// ```swift
  /// try await store.query(Counter.self).filter(\.name == "visits").update([.add("count", .int(1))])
  /// ```
  ///
  /// - Returns: how many values were changed.
  /// - Throws: ``CofferError/Code/invalidQuery`` for an unknown field or the id field;
  ///   ``CofferError/Code/invalidValue`` for a value the field cannot hold;
  ///   ``CofferError/Code/valueOutOfRange`` when an addition overflows (nothing is changed);
  ///   ``CofferError/Code/uniqueViolation`` when two values would share a unique field.
  @discardableResult
  public func update(_ changes: [FieldUpdate]) async throws -> Int {
    let codec = try await store.codec(for: T.self)
    let checked = try await TextSearch.resolvingFilter(
      try validated(for: codec), nativeMatching: store.matchesTextNatively, using: readSource)
    let schema = codec.schema
    let validated = try store.rethrowing {
      try changes.map { try QueryValidator.validate($0, schema: schema) }
    }
    if validated.isEmpty { return 0 }
    return try await change(
      .updateMatching(entity: schema.name, filter: checked.filter, changes: validated), layout: schema
    ).updated
  }
}

extension StoreQuery where T: KeyPathStorable {
  /// Sets the property a key path reads to a value in every value the query selects (see
  /// ``update(_:)``): `store.query(ChatThread.self).filter(\.id == t).update(\.unread, to: 0)`.
  ///
  /// - Returns: how many values were changed.
  @discardableResult
  public func update<V: ValueConvertible>(_ keyPath: KeyPath<T, V>, to value: V) async throws -> Int {
    guard let field = T.storedFieldName(for: keyPath) else { throw T.notStored(keyPath) }
    return try await update([.set(field, to: value.storedValue)])
  }

  /// Adds to the integer property a key path reads in every value the query selects, inside
  /// the backend (see ``update(_:)``): `query.increment(\.count, by: 1)`. A nil value stays nil.
  ///
  /// - Returns: how many values were changed.
  /// - Throws: ``CofferError/Code/valueOutOfRange`` when a sum leaves the range of `Int64`.
  @discardableResult
  public func increment<V: BinaryInteger & ValueConvertible>(_ keyPath: KeyPath<T, V>, by amount: V)
    async throws -> Int
  {
    try await add(amount, to: keyPath)
  }

  /// Adds to the integer property (optional) a key path reads; a nil value stays nil.
  @discardableResult
  public func increment<V: BinaryInteger & ValueConvertible>(_ keyPath: KeyPath<T, V?>, by amount: V)
    async throws -> Int
  {
    try await add(amount, to: keyPath)
  }

  /// Adds an integer amount to the field a key path reads.
  private func add(_ amount: some BinaryInteger, to keyPath: PartialKeyPath<T>) async throws -> Int {
    guard let field = T.storedFieldName(for: keyPath) else { throw T.notStored(keyPath) }
    guard let delta = Int64(exactly: amount) else {
      throw CofferError(
        .valueOutOfRange, "The amount to add to \(T.entityName).\(field) does not fit in Int64.",
        store: store.backend.name, entity: T.entityName, field: field)
    }
    return try await update([.add(field, .int(delta))])
  }

  /// Adds to the floating-point property a key path reads in every value the query selects,
  /// inside the backend (see ``update(_:)``).
  @discardableResult
  public func increment(_ keyPath: KeyPath<T, Double>, by amount: Double) async throws -> Int {
    guard let field = T.storedFieldName(for: keyPath) else { throw T.notStored(keyPath) }
    return try await update([.add(field, .double(amount))])
  }
}
