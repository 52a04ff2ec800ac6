/// A query's values in groups of equal values of one property, made by
/// `StoreQuery.group(by:)`; each aggregate returns one ``AggregateGroup`` per
/// key the selected values hold, in ascending key order by Coffer's value order (nil first).
///
/// ```swift
/// let unread = try await store.query(Message.self)
///   .filter(\.isRead == false)
///   .group(by: \.threadID)
///   .count()                                   // [AggregateGroup(key: 1, value: 3), …]
/// let sizes = try await store.query(Attachment.self).group(by: \.kind).sum(\.size)
/// ```
///
/// The aggregates follow the rules of ``Aggregation``; a group whose values of the aggregated
/// property are all nil has a `nil` sum, minimum, maximum and average.
public struct GroupedStoreQuery<T: KeyPathStorable, Key: Sendable>: Sendable {
  /// The query whose values are grouped (its filter selects them).
  let query: StoreQuery<T>
  /// The stored name of the field the values are grouped by.
  let field: String
  /// The key of a stored value, `nil` when it is not of the key's type.
  private let key: @Sendable (Value) -> Key?

  init(_ query: StoreQuery<T>, _ keyPath: PartialKeyPath<T>, key: @escaping @Sendable (Value) -> Key?) {
    self.field = T.storedFieldName(for: keyPath) ?? ""
    self.query = T.storedFieldName(for: keyPath) == nil ? query.failing(with: T.notStored(keyPath)) : query
    self.key = key
  }

  /// How many values each group holds.
  public func count() async throws -> [AggregateGroup<Key, Int>] {
    try await groups(.count) { Self.int($0) }
  }

  /// How many distinct non-nil values of a property each group holds.
  public func count<V: ValueConvertible>(distinct keyPath: KeyPath<T, V>) async throws -> [AggregateGroup<
    Key, Int
  >] {
    try await groups(.countDistinct(try query.storedField(keyPath))) { Self.int($0) }
  }

  /// The sum of a number property in each group (integers exact).
  ///
  /// - Throws: ``CofferError/Code/valueOutOfRange`` when a group's sum is outside `Int64` (or
  ///   the property's type), or a sum of doubles is not a finite number from finite values.
  public func sum<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V>) async throws
    -> [AggregateGroup<Key, V?>]
  {
    try await scalars(.sum(try query.storedField(keyPath)), as: V.self)
  }

  /// The sum of an optional number property's non-nil values in each group.
  @_disfavoredOverload
  public func sum<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V?>) async throws
    -> [AggregateGroup<Key, V?>]
  {
    try await scalars(.sum(try query.storedField(keyPath)), as: V.self)
  }

  /// The mean of a number property in each group.
  public func average<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V>) async throws
    -> [AggregateGroup<Key, Double?>]
  {
    try await scalars(.average(try query.storedField(keyPath)), as: Double.self)
  }

  /// The mean of an optional number property's non-nil values in each group.
  @_disfavoredOverload
  public func average<V: StoredScalar & AdditiveArithmetic>(_ keyPath: KeyPath<T, V?>) async throws
    -> [AggregateGroup<Key, Double?>]
  {
    try await scalars(.average(try query.storedField(keyPath)), as: Double.self)
  }

  /// The smallest value of a property in each group, by Coffer's order.
  public func min<V: StoredScalar>(_ keyPath: KeyPath<T, V>) async throws -> [AggregateGroup<Key, V?>] {
    try await scalars(.min(try query.storedField(keyPath)), as: V.self)
  }

  /// The smallest non-nil value of an optional property in each group.
  @_disfavoredOverload
  public func min<V: StoredScalar>(_ keyPath: KeyPath<T, V?>) async throws -> [AggregateGroup<Key, V?>] {
    try await scalars(.min(try query.storedField(keyPath)), as: V.self)
  }

  /// The largest value of a property in each group, by Coffer's order.
  public func max<V: StoredScalar>(_ keyPath: KeyPath<T, V>) async throws -> [AggregateGroup<Key, V?>] {
    try await scalars(.max(try query.storedField(keyPath)), as: V.self)
  }

  /// The largest non-nil value of an optional property in each group.
  @_disfavoredOverload
  public func max<V: StoredScalar>(_ keyPath: KeyPath<T, V?>) async throws -> [AggregateGroup<Key, V?>] {
    try await scalars(.max(try query.storedField(keyPath)), as: V.self)
  }

  private static func int(_ value: Value) -> Int {
    if case .int(let number) = value { return Int(number) }
    return 0
  }

  private func scalars<V: StoredScalar>(_ function: Aggregation.Function, as type: V.Type) async throws
    -> [AggregateGroup<Key, V?>]
  {
    try await groups(function) { try query.decoded($0, function, as: V.self) }
  }

  private func groups<R>(_ function: Aggregation.Function, _ result: (Value) throws -> R) async throws
    -> [AggregateGroup<Key, R>]
  {
    let groups = try await query.aggregate(function, groupedBy: field)
    return try groups.map { group in
      guard let key = key(group.key) else {
        throw CofferError(
          .decodingFailed,
          "A key of \(T.entityName).\(field) could not be read as \(Key.self); the stored value is of another "
            + "kind or out of range.", store: query.store.backend.name, entity: T.entityName, field: field)
      }
      return AggregateGroup(key: key, value: try result(group.value))
    }
  }
}
