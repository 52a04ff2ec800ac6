/// Aggregates over what a query's filter selects, with key paths. Sort, offset and limit do not
/// apply: every value the filter selects counts, as for ``StoreQuery/delete()``. Nulls are
/// ignored; see ``Aggregation`` for the rules every backend follows (exact integer sums, the
/// tolerance for doubles, infinities).
///
/// ```swift
/// let bytes = try await store.query(Attachment.self).filter(\.threadID == t).sum(\.size)
/// let newest = try await store.query(Message.self).max(\.date)
/// let unread = try await store.query(Message.self).filter(\.isRead == false).group(by: \.threadID).count()
/// ```
extension StoreQuery where T: KeyPathStorable {
  /// The sum of a number property over the values the filter selects, or `nil` when there is
  /// none. Integers add up exactly.
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` for a sum outside `Int64` (or the
  ///   property's type), or a sum of doubles that is not a finite number from finite values.
  public func sum<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V>) async throws -> V? {
    try await sum(keyPath, as: V.self)
  }

  /// The sum of an optional number property's non-nil values, or `nil` when there is none.
  @_disfavoredOverload
  public func sum<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V?>) async throws -> V? {
    try await sum(keyPath, as: V.self)
  }

  /// The mean of a number property as a `Double`, or `nil` when there is no value.
  public func average<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V>) async throws -> Double?
  {
    try await average(keyPath as PartialKeyPath<T>)
  }

  /// The mean of an optional number property's non-nil values, or `nil` when there is none.
  @_disfavoredOverload
  public func average<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V?>) async throws -> Double?
  {
    try await average(keyPath as PartialKeyPath<T>)
  }

  /// The smallest value of a property by Coffer's order (strings by code point, dates
  /// chronologically, UUIDs by their bytes, `false` before `true`), or `nil` when there is none.
  public func min<V: StoredScalar>(_ keyPath: KeyPath<T, V>) async throws -> V? {
    try await extreme(keyPath, Aggregation.Function.min, as: V.self)
  }

  /// The smallest non-nil value of an optional property, or `nil` when there is none.
  @_disfavoredOverload
  public func min<V: StoredScalar>(_ keyPath: KeyPath<T, V?>) async throws -> V? {
    try await extreme(keyPath, Aggregation.Function.min, as: V.self)
  }

  /// The largest value of a property by Coffer's order, or `nil` when there is none.
  public func max<V: StoredScalar>(_ keyPath: KeyPath<T, V>) async throws -> V? {
    try await extreme(keyPath, Aggregation.Function.max, as: V.self)
  }

  /// The largest non-nil value of an optional property, or `nil` when there is none.
  @_disfavoredOverload
  public func max<V: StoredScalar>(_ keyPath: KeyPath<T, V?>) async throws -> V? {
    try await extreme(keyPath, Aggregation.Function.max, as: V.self)
  }

  /// How many distinct non-nil values a property holds among the values the filter selects.
  public func count<V: ValueConvertible>(distinct keyPath: KeyPath<T, V>) async throws -> Int {
    let field = try storedField(keyPath)
    guard case .int(let count) = try await aggregateValue(.countDistinct(field)) else { return 0 }
    return Int(count)
  }

  /// The values the filter selects in groups of equal values of a property, to count or
  /// aggregate per group: `query.group(by: \.threadID).count()`. Groups come in ascending order
  /// of their key.
  public func group<K: StoredScalar>(by keyPath: KeyPath<T, K>) -> GroupedStoreQuery<T, K> {
    GroupedStoreQuery(self, keyPath) { K(storedScalar: $0) }
  }

  /// Groups by an optional property: the values where it is nil form one group, with key
  /// `nil`, which comes first.
  @_disfavoredOverload
  public func group<K: StoredScalar>(by keyPath: KeyPath<T, K?>) -> GroupedStoreQuery<T, K?> {
    GroupedStoreQuery(self, keyPath) { value in
      value.isNull ? .some(nil) : K(storedScalar: value).map { .some($0) }
    }
  }

  /// Groups by an enum property with a scalar raw value, in the order of the raw values; the
  /// keys are the enum's cases.
  @_disfavoredOverload
  public func group<K: RawRepresentable & Sendable>(by keyPath: KeyPath<T, K>) -> GroupedStoreQuery<T, K>
  where K.RawValue: StoredScalar {
    GroupedStoreQuery(self, keyPath) { K.RawValue(storedScalar: $0).flatMap(K.init(rawValue:)) }
  }

  /// Groups by an optional enum property: the values where it is nil form one group, first.
  @_disfavoredOverload
  public func group<K: RawRepresentable & Sendable>(by keyPath: KeyPath<T, K?>) -> GroupedStoreQuery<T, K?>
  where K.RawValue: StoredScalar {
    GroupedStoreQuery(self, keyPath) { value in
      value.isNull ? .some(nil) : K.RawValue(storedScalar: value).flatMap(K.init(rawValue:)).map { .some($0) }
    }
  }

  /// The stored field a key path reads.
  func storedField(_ keyPath: PartialKeyPath<T>) throws -> String {
    if let keyPathError { throw keyPathError }
    guard let field = T.storedFieldName(for: keyPath) else { throw T.notStored(keyPath) }
    return field
  }

  private func sum<V: StoredScalar>(_ keyPath: PartialKeyPath<T>, as type: V.Type) async throws -> V? {
    let function = Aggregation.Function.sum(try storedField(keyPath))
    return try decoded(try await aggregateValue(function), function, as: V.self)
  }

  private func average(_ keyPath: PartialKeyPath<T>) async throws -> Double? {
    guard case .double(let mean) = try await aggregateValue(.average(try storedField(keyPath))) else {
      return nil
    }
    return mean
  }

  private func extreme<V: StoredScalar>(
    _ keyPath: PartialKeyPath<T>, _ make: (String) -> Aggregation.Function, as type: V.Type
  ) async throws -> V? {
    let function = make(try storedField(keyPath))
    return try decoded(try await aggregateValue(function), function, as: V.self)
  }
}
