/// Reading through the identity map.
extension ModelGraph {
  /// The graph's value of a type with an id, read from the source (store or parent) the first
  /// time and kept, so later reads return the same value without asking the store; `nil` when
  /// there is none (or it is deleted in the graph).
  ///
  /// Values of a ``GraphOptOut`` type are returned but not kept.
  public func get<T: Storable>(_ type: T.Type, id: T.ID) async throws -> T? {
    let adapter = try await adapter(for: type)
    guard let value = try await load(ModelKey(type, id: id), adapter: adapter) else { return nil }
    return try typed(value, as: type)
  }

  /// The graph's value of a type with an id — or, when neither the graph nor its store has one,
  /// a new value with the type's defaults (``CreatableByID/init(id:)``), added to the graph as
  /// an insert to save. Concurrent calls for one id get the same value.
  ///
  /// ```swift
  /// let author = try await graph.instance(of: Author.self, id: "0001")
  /// ```
  ///
  /// - Throws: the store's error while reading, or a validation error if the defaults are not
  ///   valid.
  public func instance<T: CreatableByID>(of type: T.Type, id: T.ID) async throws -> T {
    if let found = try await get(type, id: id) { return found }
    let adapter = try await adapter(for: type)
    let key = ModelKey(type, id: id)
    try await perform(
      [
        Edit(
          key: key, new: try graphValue(T(id: id), adapter), requirement: .createIfAbsent, adapter: adapter)
      ],
      options: .standard)
    guard let value = state.withLock({ $0.entries[key]?.current }) else {
      // A concurrent delete won the race: what the graph holds now is no value.
      return T(id: id)
    }
    return try typed(value, as: type)
  }

  /// A value as the graph keeps it: its normalized row (dates to the microsecond) and the value
  /// decoded from that row, which is what the store would give back.
  func graphValue<T: Storable>(_ value: T, _ adapter: EntityAdapter) throws -> GraphValue {
    let row = try QueryValidator.validate(
      RowCodec<T>(schema: adapter.schema).encode(value), schema: adapter.schema)
    return try adapter.value(row)
  }
}
