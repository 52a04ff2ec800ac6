extension StoreQuery where T: KeyPathStorable {
  /// Also requires a filter written with key paths (combined with `&&` with earlier filters):
  ///
  /// ```swift
  /// store.query(Message.self).filter(\.threadID == t && \.date > d)
  /// ```
  public func filter(_ filter: KeyPathFilter<T>) -> StoreQuery {
    self.filter(filter.filter).failing(with: filter.error)
  }

  /// Orders by the property a key path reads, after any keys given before; optional properties
  /// sort nulls first when ascending and last when descending.
  ///
  /// ```swift
  /// store.query(Message.self).sort(\.date, .descending)
  /// ```
  public func sort<V: ValueConvertible>(_ keyPath: KeyPath<T, V>, _ direction: Sort.Direction = .ascending)
    -> StoreQuery
  {
    guard let field = T.storedFieldName(for: keyPath) else { return failing(with: T.notStored(keyPath)) }
    return sort([Sort(field, direction)])
  }

  /// Orders by an enum property, by raw value.
  @_disfavoredOverload
  public func sort<V: RawRepresentable>(_ keyPath: KeyPath<T, V>, _ direction: Sort.Direction = .ascending)
    -> StoreQuery where V.RawValue: StoredScalar
  {
    guard let field = T.storedFieldName(for: keyPath) else { return failing(with: T.notStored(keyPath)) }
    return sort([Sort(field, direction)])
  }

  /// Orders by an optional enum property, by raw value (nulls first when ascending).
  @_disfavoredOverload
  public func sort<V: RawRepresentable>(_ keyPath: KeyPath<T, V?>, _ direction: Sort.Direction = .ascending)
    -> StoreQuery where V.RawValue: StoredScalar
  {
    guard let field = T.storedFieldName(for: keyPath) else { return failing(with: T.notStored(keyPath)) }
    return sort([Sort(field, direction)])
  }
}

extension Sort {
  /// A key on `field` in `direction`.
  init(_ field: String, _ direction: Direction) {
    self = direction == .relevance ? .relevance(field) : Sort(field, ascending: direction == .ascending)
  }

  /// Which way a key-path sort goes: ``StoreQuery/sort(_:_:)-67v69``.
  public enum Direction: Sendable, Hashable {
    /// Smaller values first, nulls first.
    case ascending
    /// Larger values first, nulls last.
    case descending
    /// The best matches of the query's `matches` filters on the field first (see
    /// ``Sort/relevance(_:)``).
    case relevance
  }
}
