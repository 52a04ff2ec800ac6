import CLMDB
@_spi(Backend) import Coffer

/// What a backend knows about one prepared entity: the declared schema, the layout its rows are
/// written under, and its databases.
///
/// Another process may since have prepared the entity with other indexes or fields; the handle
/// then made from the catalog (see ``LMDBBackend/refreshed(_:record:in:)``) still reads and
/// writes in the declared schema, and keeps the indexes of the stored schema through
/// ``maintained``.
final class EntityHandle: Sendable {
  /// The schema the code declared, which every row is returned in.
  let schema: EntitySchema
  /// The layout number rows are written under.
  let layout: Int
  /// The rows database: id key → row.
  let rows: MDB_dbi
  /// The indexes queries may walk, in the schema's order: every index of the stored schema
  /// whose fields the declared one has, alike.
  let indexes: [IndexHandle]
  /// How rows written under other known layouts become rows of ``schema``, by layout;
  /// `nil` for layouts that cannot (a kind changed).
  let evolutions: [Int: OlderLayout?]
  /// The declared schema and the current layout, for decoding rows.
  let shape: RowCodec.Shape
  /// The handle of the stored schema, whose indexes writes keep, when it is not this one's
  /// (another process prepared the entity since), and how a declared row becomes one of it.
  let maintained: (handle: EntityHandle, evolution: SchemaEvolution?)?

  init(
    schema: EntitySchema, layout: Int, rows: MDB_dbi, indexes: [IndexHandle],
    evolutions: [Int: OlderLayout?],
    maintained: (handle: EntityHandle, evolution: SchemaEvolution?)? = nil
  ) {
    self.schema = schema
    self.layout = layout
    self.rows = rows
    self.indexes = indexes
    self.evolutions = evolutions
    self.shape = RowCodec.Shape(schema: schema, layout: layout)
    self.maintained = maintained
  }

  /// The handle whose schema and indexes writes keep the indexes by: the stored schema's.
  var writer: EntityHandle { maintained?.handle ?? self }

  /// A row of the declared schema as the writer's schema sees it.
  func writerValues(_ values: [Value]) -> [Value] {
    guard let maintained else { return values }
    return maintained.evolution?.migrate(Row(values)).values ?? values
  }

  /// Writes the id key of a row into `key`.
  func idKey(_ values: [Value], into key: inout [UInt8]) {
    key.removeAll(keepingCapacity: true)
    KeyEncoding.append(values[schema.idPosition], to: &key)
  }

  /// Throws `invalidValue` naming the entity, the row and its id field when the id's key (in
  /// `key`) is longer than an LMDB key holds.
  func checkIDKey(_ key: [UInt8], _ values: [Value], store: String) throws {
    guard key.count > LMDBEnvironment.maxKeySize else { return }
    let id = values[schema.idPosition]
    throw CofferError(
      .invalidValue,
      "\(schema.name) \(id) has an id whose key is \(key.count) bytes; LMDB holds at most "
        + "\(LMDBEnvironment.maxKeySize) bytes in a key. Use a shorter id. Nothing in the batch was applied.",
      store: store, entity: schema.name, id: id, field: schema.idField.name)
  }
}

/// A layout rows may still be stored under: how to walk such a row and how to evolve it into
/// the declared schema, both worked out once.
struct OlderLayout: Sendable {
  let shape: RowCodec.Shape
  let evolution: SchemaEvolution

  /// Layout `layout`, whose fields are `stored`, read as `schema`; `nil` when it cannot be (a
  /// field changed kind).
  init?(_ layout: Int, stored: EntitySchema, as schema: EntitySchema, store: String) {
    guard let evolution = try? SchemaEvolution(from: stored, to: schema, store: store) else { return nil }
    self.shape = RowCodec.Shape(schema: evolution.stored, layout: layout)
    self.evolution = evolution
  }
}

/// One index of an entity: an `MDB_DUPSORT` database from index key to id keys.
struct IndexHandle: Sendable {
  let index: Index
  /// The positions of the indexed fields in the declared schema.
  let positions: [Int]
  let database: MDB_dbi
  /// The database's name in the catalog, which tells whether it is still the index's.
  let name: String

  /// Writes the index key of a row into `key`; returns whether any of its fields is null
  /// (which exempts it from uniqueness).
  @discardableResult
  func key(_ values: [Value], into key: inout [UInt8]) -> Bool {
    key.removeAll(keepingCapacity: true)
    var hasNull = false
    for position in positions {
      let value = values[position]
      if value.isNull { hasNull = true }
      KeyEncoding.appendComponent(value, to: &key)
    }
    return hasNull
  }
}
