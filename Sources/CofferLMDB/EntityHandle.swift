import CLMDB
import Coffer

/// What a backend knows about one prepared entity: the declared schema, the layout its rows are
/// written under, and its databases.
struct EntityHandle: Sendable {
  /// The schema the code declared, which every row is returned in.
  let schema: EntitySchema
  /// The layout number rows are written under.
  let layout: Int
  /// The rows database: id key → row.
  let rows: MDB_dbi
  /// The indexes, in the schema's order.
  let indexes: [IndexHandle]
  /// How rows written under other known layouts become rows of ``schema``, by layout;
  /// `nil` for layouts that cannot (a kind changed).
  let evolutions: [Int: SchemaEvolution?]

  /// The id key of a row.
  func idKey(_ values: [Value]) -> [UInt8] { KeyEncoding.idKey(values[schema.idPosition]) }
}

/// One index of an entity: an `MDB_DUPSORT` database from index key to id keys.
struct IndexHandle: Sendable {
  let index: Index
  /// The positions of the indexed fields in the declared schema.
  let positions: [Int]
  let database: MDB_dbi

  /// The index key of a row, and whether any of its fields is null (which exempts it from
  /// uniqueness).
  func key(_ values: [Value]) -> (key: [UInt8], hasNull: Bool) {
    var key: [UInt8] = []
    key.reserveCapacity(16 * positions.count)
    var hasNull = false
    for position in positions {
      let value = values[position]
      if value.isNull { hasNull = true }
      KeyEncoding.appendComponent(value, to: &key)
    }
    return (key, hasNull)
  }
}
