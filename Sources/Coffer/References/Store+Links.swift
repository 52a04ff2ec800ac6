/// Many-to-many relationships through a join entity: a `Storable` type whose rows each link one
/// row of one entity to one row of another, with two references (usually both
/// ``DeleteRule/cascade``, so deleting either side removes its links).
///
/// ```swift
/// @Storable
/// struct Tagging {
///   var id: String  // e.g. "\(messageID)/\(tagID)"
///   @Reference(ChatMessage.self, onDelete: .cascade) var messageID: Int64
///   @Reference(Tag.self, onDelete: .cascade) var tagID: String
/// }
///
/// try await store.link(Tagging(id: "7/urgent", messageID: 7, tagID: "urgent"), \.messageID, \.tagID)
/// let tags = try await store.linked(Tag.self, from: 7, through: \Tagging.messageID, to: \.tagID)
/// try await store.unlink(Tagging.self, \.messageID, 7, \.tagID, "urgent")
/// ```
extension Store {
  /// Stores a join row unless a join row already links the same pair; both sides must be
  /// stored (their references are checked as for any write).
  ///
  /// Runs as a ``transaction(retries:_:)``, so two tasks linking the same pair at once store
  /// one row.
  ///
  /// - Returns: whether the join row was stored (`false`: the pair was linked already).
  /// - Throws: ``CofferError/Code/referenceViolation`` when a side is not stored.
  @discardableResult
  public func link<Join: KeyPathStorable, Left: ValueConvertible, Right: ValueConvertible>(
    _ join: Join, _ left: KeyPath<Join, Left>, _ right: KeyPath<Join, Right>
  ) async throws -> Bool {
    let pair = left == join[keyPath: left] && right == join[keyPath: right]
    return try await transaction { transaction in
      if try await transaction.query(Join.self).filter(pair).count() > 0 { return false }
      try transaction.insert(join)
      return true
    }
  }

  /// Removes the join rows that link a pair.
  ///
  /// - Returns: how many join rows were removed (0 when the pair was not linked).
  @discardableResult
  public func unlink<Join: KeyPathStorable, Left: ValueConvertible, Right: ValueConvertible>(
    _ type: Join.Type, _ left: KeyPath<Join, Left>, _ leftValue: Left, _ right: KeyPath<Join, Right>,
    _ rightValue: Right
  ) async throws -> Int {
    try await query(type).filter(left == leftValue && right == rightValue).delete()
  }

  /// The rows of `Target` linked to one row through a join entity, ordered by id: two backend
  /// calls (the join rows, then the targets by id), whatever their number.
  ///
  /// - Parameters:
  ///   - target: the type at the other end of the links.
  ///   - value: the id of the row whose links to follow.
  ///   - from: the join entity's reference to that row.
  ///   - to: the join entity's reference to `Target`'s ids.
  public func linked<Target: Storable, Join: KeyPathStorable, Left: ValueConvertible>(
    _ target: Target.Type, from value: Left, through from: KeyPath<Join, Left>, to: KeyPath<Join, Target.ID>
  ) async throws -> [Target] {
    let joins = try await query(Join.self).filter(from == value).fetch()
    var seen: Set<Target.ID> = []
    let ids = joins.map { $0[keyPath: to] }.filter { seen.insert($0).inserted }
    let targets = try await get(target, ids: ids)
    return targets.sorted { ValueOrder.compare($0.id.storedValue, $1.id.storedValue) < 0 }
  }
}
