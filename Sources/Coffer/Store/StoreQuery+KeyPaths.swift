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
    return sort(Sort(field, ascending: direction == .ascending))
  }
}

extension Sort {
  /// Which way a key-path sort goes: ``StoreQuery/sort(_:_:)``.
  public enum Direction: Sendable, Hashable {
    /// Smaller values first, nulls first.
    case ascending
    /// Larger values first, nulls last.
    case descending
  }
}

extension Store {
  /// The number of stored values of a type that match a key-path filter.
  ///
  /// ```swift
  /// let unread = try await store.count(Message.self, where: \.readAt == nil)
  /// ```
  public func count<T: KeyPathStorable>(_ type: T.Type, where filter: KeyPathFilter<T>) async throws -> Int {
    try await query(type).filter(filter).count()
  }

  /// The first value of a type that matches a key-path filter, in id order, or `nil`.
  public func first<T: KeyPathStorable>(_ type: T.Type, where filter: KeyPathFilter<T>) async throws -> T? {
    try await query(type).filter(filter).first()
  }

  /// Removes every stored value of a type that matches a key-path filter and returns how many.
  @discardableResult
  public func deleteAll<T: KeyPathStorable>(_ type: T.Type, where filter: KeyPathFilter<T>) async throws
    -> Int
  {
    try await query(type).filter(filter).delete()
  }
}
