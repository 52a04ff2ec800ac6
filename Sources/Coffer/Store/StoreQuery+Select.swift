/// Some fields of one stored value, read without decoding the others: what a query narrowed
/// with ``StoreQuery/select(_:)`` returns.
///
/// Read a field by key path with `value(_:)` (typed, for scalar and enum properties) or by stored
/// name with ``subscript(_:)`` (the stored ``Value``, for any field):
///
/// ```swift
/// for row in try await store.query(Message.self).select(\.id, \.date).fetch() {
///   print(try row.value(\.id), try row.value(\.date))
/// }
/// ```
public struct Projection<T: Storable>: Sendable, Hashable {
  /// The selected fields' stored names, in the order they were selected.
  public let fields: [String]
  /// The stored values of ``fields``, in the same order.
  public let values: [Value]

  /// The stored value of a selected field, or `nil` when the field was not selected.
  public subscript(_ field: String) -> Value? {
    fields.firstIndex(of: field).map { values[$0] }
  }
}

extension Projection where T: KeyPathStorable {
  /// The value of a selected scalar property.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when the property was not selected or is not
  ///   stored; ``CofferError/Code/corruptStore`` when the stored value is not of its type.
  public func value<V: StoredScalar>(_ keyPath: KeyPath<T, V>) throws -> V {
    let stored = try storedValue(keyPath)
    guard let value = V(storedScalar: stored) else { throw mismatch(keyPath) }
    return value
  }

  /// The value of a selected optional scalar property (`nil` when it is null).
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when the property was not selected or is not
  ///   stored; ``CofferError/Code/corruptStore`` when the stored value is not of its type.
  public func value<V: StoredScalar>(_ keyPath: KeyPath<T, V?>) throws -> V? {
    let stored = try storedValue(keyPath)
    if stored.isNull { return nil }
    guard let value = V(storedScalar: stored) else { throw mismatch(keyPath) }
    return value
  }

  /// The value of a selected enum property stored as its raw value.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when the property was not selected or is not
  ///   stored; ``CofferError/Code/corruptStore`` when the stored value is no case's raw value.
  @_disfavoredOverload
  public func value<V: RawRepresentable>(_ keyPath: KeyPath<T, V>) throws -> V
  where V.RawValue: StoredScalar {
    let stored = try storedValue(keyPath)
    guard let raw = V.RawValue(storedScalar: stored), let value = V(rawValue: raw) else {
      throw mismatch(keyPath)
    }
    return value
  }

  /// The value of a selected optional enum property stored as its raw value (`nil` when it is
  /// null).
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` when the property was not selected or is not
  ///   stored; ``CofferError/Code/corruptStore`` when the stored value is no case's raw value.
  @_disfavoredOverload
  public func value<V: RawRepresentable>(_ keyPath: KeyPath<T, V?>) throws -> V?
  where V.RawValue: StoredScalar {
    let stored = try storedValue(keyPath)
    if stored.isNull { return nil }
    guard let raw = V.RawValue(storedScalar: stored), let value = V(rawValue: raw) else {
      throw mismatch(keyPath)
    }
    return value
  }

  private func storedValue(_ keyPath: PartialKeyPath<T>) throws -> Value {
    guard let field = T.storedFieldName(for: keyPath) else { throw T.notStored(keyPath) }
    guard let value = self[field] else {
      throw CofferError(
        .invalidQuery, "\(T.entityName).\(field) was not selected; add it to select(…) to read it.",
        entity: T.entityName, field: field)
    }
    return value
  }

  private func mismatch(_ keyPath: PartialKeyPath<T>) -> CofferError {
    CofferError(
      .corruptStore, "The stored value of \(keyPath) is not of the property's type.", entity: T.entityName,
      field: T.storedFieldName(for: keyPath))
  }
}

/// A ``StoreQuery`` that reads only some fields; see ``StoreQuery/select(_:)``.
public struct SelectedQuery<T: Storable>: Sendable {
  /// The query whose values are read.
  let base: StoreQuery<T>
  /// The stored names of the fields read, in order.
  let fields: [String]
  /// Why the query cannot run: a key path in it reads no stored field.
  let error: CofferError?

  /// The selected fields of every value the query selects, in its order (see ``StoreQuery/fetch()``).
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the schema does not have, or as
  ///   ``StoreQuery/fetch()`` does.
  public func fetch() async throws -> [Projection<T>] {
    if let error { throw error.inStore(base.store.backend.name) }
    let codec = try await base.store.codec(for: T.self)
    let checked = try base.validated(for: codec)
    let positions = try fields.map { field in
      guard let position = codec.schema.position(of: field) else {
        throw CofferError(
          .invalidQuery, "\(T.entityName) has no stored field '\(field)' to select.",
          store: base.store.backend.name, entity: T.entityName, field: field)
      }
      return position
    }
    var projections: [Projection<T>] = []
    if let limit = checked.limit, limit > 0 {
      projections.reserveCapacity(Swift.min(limit, StoreQuery<T>.reservedAtMost))
    }
    try await base.read(checked) { stored in
      projections.append(Projection(fields: fields, values: try positions.map { try stored.value(at: $0) }))
    }
    return projections
  }

  /// The selected fields of the first value the query selects, or `nil` when it selects none.
  public func first() async throws -> Projection<T>? {
    try await SelectedQuery(base: base.limit(1), fields: fields, error: error).fetch().first
  }
}

extension StoreQuery {
  /// The query, reading only the fields with these stored names: each value comes back as a
  /// ``Projection`` of them, and the other fields are never decoded.
  public func select(fields: [String]) -> SelectedQuery<T> {
    SelectedQuery(base: self, fields: fields, error: keyPathError)
  }
}

extension StoreQuery where T: KeyPathStorable {
  /// The query, reading only the properties these key paths read: each value comes back as a
  /// ``Projection`` of them, and the other fields are never decoded.
  ///
  /// ```swift
  /// let dates = try await store.query(Message.self).filter(\.threadID == t).select(\.id, \.date).fetch()
  /// let newest = try dates.map { try $0.value(\.date) }.max()
  /// ```
  public func select(_ keyPaths: PartialKeyPath<T>...) -> SelectedQuery<T> {
    var fields: [String] = []
    var error = keyPathError
    for keyPath in keyPaths {
      if let field = T.storedFieldName(for: keyPath) {
        fields.append(field)
      } else if error == nil {
        error = T.notStored(keyPath)
      }
    }
    return SelectedQuery(base: self, fields: fields, error: error)
  }
}

extension Store {
  /// The values of some fields of the rows a query selects, in its order, after checking it
  /// against the prepared schema: the row API's ``StoreQuery/select(fields:)``. Each row holds
  /// the values of `fields`, in that order.
  @_spi(Backend) public func fetchValues(_ query: Query, fields: [String]) async throws -> [Row] {
    let schema = try preparedSchema(query.entity)
    let checked = try rethrowing { try QueryValidator.validate(query, schema: schema) }
    let positions = try fields.map { field in
      guard let position = schema.position(of: field) else {
        throw CofferError(
          .invalidQuery, "\(schema.name) has no stored field '\(field)' to select.", store: backend.name,
          entity: schema.name, field: field)
      }
      return position
    }
    var rows: [Row] = []
    try await readInTurn(.fetch, checked.entity) {
      try await readSearching(checked) { stored in
        rows.append(Row(try positions.map { try stored.value(at: $0) }))
      }
    }
    return rows
  }
}
