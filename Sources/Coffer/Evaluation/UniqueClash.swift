/// Stored rows that break a unique index, named the same way by every backend when a schema
/// evolution adds a unique index, or fills a uniquely indexed field with its default.
///
/// The row named is the one with the smallest id (in id order) among all rows that share their
/// values of a unique index's fields with another row (rows with a null in those fields are
/// exempt); ``other`` is the smallest id it shares them with. When rows break several unique
/// indexes, the smallest such id wins, and between indexes with the same one the first declared.
@_spi(Backend) public struct UniqueClash: Sendable, Hashable {
  /// The unique index the rows break.
  public var index: Index
  /// The smallest id among the rows that break it.
  public var id: Value
  /// The smallest other id with the same values of the index's fields.
  public var other: Value

  /// A clash.
  public init(index: Index, id: Value, other: Value) {
    self.index = index
    self.id = id
    self.other = other
  }

  /// The clash that names the smallest id, among `rows` of `schema` (rows already in the
  /// schema's shape), or `nil` when every unique index holds.
  public static func smallest(in rows: [Row], schema: EntitySchema) -> UniqueClash? {
    var best: UniqueClash?
    for index in schema.uniqueIndexes {
      let positions = index.fields.compactMap { schema.position(of: $0) }
      var holders: [[Value]: [Value]] = [:]
      for row in rows {
        let key = positions.map { row[$0] }
        if key.contains(where: \.isNull) { continue }
        holders[key, default: []].append(row[schema.idPosition])
      }
      for ids in holders.values where ids.count > 1 {
        let sorted = ids.sorted { ValueOrder.compare($0, $1) < 0 }
        if let current = best, ValueOrder.compare(sorted[0], current.id) >= 0 { continue }
        best = UniqueClash(index: index, id: sorted[0], other: sorted[1])
      }
    }
    return best
  }

  /// The clash that names the smallest id among clashes found one index at a time.
  public static func smallest(of clashes: [UniqueClash]) -> UniqueClash? {
    var best: UniqueClash?
    for clash in clashes where best.map({ ValueOrder.compare(clash.id, $0.id) < 0 }) ?? true { best = clash }
    return best
  }

  /// The ``CofferError/Code/uniqueViolation`` for the clash, naming entity, id and fields.
  public func error(entity: String, store: String?, underlying: (any Error & Sendable)? = nil) -> CofferError
  {
    let fields = index.fields.joined(separator: ", ")
    return CofferError(
      .uniqueViolation,
      "\(entity) \(id) has the same \(fields) as \(entity) \(other), so \(index.fields.count == 1 ? "that field" : "those fields") "
        + "cannot be made unique. Remove or change the duplicates first. Nothing was changed.",
      store: store, entity: entity, id: id, field: index.fields.joined(separator: ","),
      underlying: underlying)
  }
}
