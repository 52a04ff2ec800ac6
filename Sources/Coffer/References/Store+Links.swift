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

/// The same relationships for join types that are `Storable` through `Codable` alone: their
/// properties have no key paths Coffer can name, so the references are named by stored field.
///
/// ```swift
/// try await store.link(Tagging(id: "7/urgent", messageID: 7, tagID: "urgent"), "messageID", "tagID")
/// let tags = try await store.linked(Tag.self, from: 7, through: Tagging.self, "messageID", to: "tagID")
/// try await store.unlink(Tagging.self, "messageID", 7, "tagID", "urgent")
/// ```
extension Store {
  /// Stores a join row unless a join row already links the same pair (the key-path `link`,
  /// with the references named by stored field).
  ///
  /// - Returns: whether the join row was stored (`false`: the pair was linked already).
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the join entity lacks;
  ///   ``CofferError/Code/referenceViolation`` when a side is not stored.
  @discardableResult
  public func link<Join: Storable>(_ join: Join, _ left: String, _ right: String) async throws -> Bool {
    let codec = try await codec(for: Join.self)
    let row = try rethrowing { try codec.encode(join) }
    let pair = try [left, right].map { field -> Filter in
      guard let position = codec.schema.position(of: field) else { throw missingField(field, of: Join.self) }
      return .compare(field: field, op: .equal, value: row[position])
    }
    return try await transaction { transaction in
      if try await transaction.query(Join.self).filter(.and(pair)).count() > 0 { return false }
      try transaction.insert(join)
      return true
    }
  }

  /// Removes the join rows that link a pair (the key-path `unlink`, with the references named
  /// by stored field).
  ///
  /// - Returns: how many join rows were removed (0 when the pair was not linked).
  @discardableResult
  public func unlink<Join: Storable>(
    _ type: Join.Type, _ left: String, _ leftValue: some ValueConvertible, _ right: String,
    _ rightValue: some ValueConvertible
  ) async throws -> Int {
    try await query(type).filter(
      .and([
        .compare(field: left, op: .equal, value: leftValue.storedValue),
        .compare(field: right, op: .equal, value: rightValue.storedValue),
      ])
    ).delete()
  }

  /// The rows of `Target` linked to one row through a join entity, ordered by id
  /// (the key-path `linked`, with the references named by stored field): two backend
  /// calls whatever their number.
  ///
  /// - Parameters:
  ///   - target: the type at the other end of the links.
  ///   - value: the id of the row whose links to follow.
  ///   - join: the join entity's type.
  ///   - from: the join entity's stored field that refers to that row.
  ///   - to: the join entity's stored field that holds `Target`'s ids.
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the join entity lacks.
  public func linked<Target: Storable, Join: Storable>(
    _ target: Target.Type, from value: some ValueConvertible, through join: Join.Type, _ from: String,
    to: String
  ) async throws -> [Target] {
    let codec = try await codec(for: Join.self)
    guard let position = codec.schema.position(of: to) else { throw missingField(to, of: Join.self) }
    let joins = try await fetchRows(
      Query(entity: Join.entityName, filter: .compare(field: from, op: .equal, value: value.storedValue)))
    var seen: Set<Value> = []
    var ids: [Target.ID] = []
    for row in joins where seen.insert(row[position]).inserted {
      guard let id = Target.ID(storedScalar: row[position]) else {
        throw CofferError(
          .invalidQuery, "\(Join.entityName).\(to) does not hold ids of \(Target.entityName).",
          store: backend.name, entity: Join.entityName, field: to)
      }
      ids.append(id)
    }
    let targets = try await get(target, ids: ids)
    return targets.sorted { ValueOrder.compare($0.id.storedValue, $1.id.storedValue) < 0 }
  }

  private func missingField<T: Storable>(_ field: String, of type: T.Type) -> CofferError {
    CofferError(
      .invalidQuery, "\(T.entityName) has no stored field '\(field)'.", store: backend.name,
      entity: T.entityName, field: field)
  }
}
