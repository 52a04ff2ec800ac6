@_spi(Backend) import Coffer
import Foundation

/// Entry points for the libFuzzer targets in `Fuzz/`: the decoders `LMDBBackend` runs on bytes
/// read from its memory map — rows (``RowCodec``), id keys (``KeyEncoding``) and the catalog's
/// entries (``Catalog``) — reached in memory, without an environment or a transaction.
///
/// Not API: the `Fuzzing` SPI exists only so that the fuzz targets can reach the decoders.
@_spi(Fuzzing) public enum LMDBFuzzing {
  /// The store name errors carry.
  private static let context = StoreContext(name: "lmdb:fuzz", path: "fuzz")

  /// A catalog entry of an entity: every schema its rows were written under, the current one's
  /// position, and the names of its rows and index databases.
  public struct CatalogEntry: Sendable, Equatable {
    /// Every schema rows were written under; a row's layout number indexes this list.
    public var layouts: [EntitySchema]
    /// The position of the current schema in ``layouts``.
    public var current: Int
    /// The rows database's name.
    public var rows: String
    /// The index databases' names, one per index of the current schema.
    public var indexes: [String]

    /// An entry.
    public init(layouts: [EntitySchema], current: Int, rows: String, indexes: [String]) {
      self.layouts = layouts
      self.current = current
      self.rows = rows
      self.indexes = indexes
    }
  }

  /// Decodes a stored row the way a read does: under the current layout `layouts[current]`,
  /// or, for a row that names an older layout, under that one and then evolved to the current
  /// schema.
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that are not a row of the entity.
  public static func decodeRow(_ bytes: [UInt8], layouts: [EntitySchema], current: Int) throws -> [Value] {
    let schema = layouts[current]
    let key: [UInt8] = []
    return try bytes.withUnsafeBytes { row in
      try key.withUnsafeBytes { key in
        func damage(_ damage: RowDamage) -> CofferError {
          LMDBBackend.damage(damage, key: key, schema: schema, store: context.name, path: context.path)
        }
        let layout: Int
        do throws(RowDamage) {
          return try RowCodec.decode(row, schema: schema, layout: current)
        } catch .otherLayout(let other) {
          layout = other
        } catch {
          throw damage(error)
        }
        guard layouts.indices.contains(layout) else {
          throw damage(.malformed("it names layout \(layout), which the catalog does not list"))
        }
        guard let older = OlderLayout(layout, stored: layouts[layout], as: schema, store: context.name) else {
          throw CofferError(
            .schemaMismatch, "The row's layout \(layout) cannot be read as the current schema.")
        }
        do throws(RowDamage) {
          return older.evolution.migrate(Row(try older.shape.decode(row))).values
        } catch {
          throw damage(error)
        }
      }
    }
  }

  /// The bytes a row of `values` is stored as, under layout `layout` (``RowCodec``).
  public static func encodeRow(_ values: [Value], layout: Int) -> [UInt8] {
    var bytes: [UInt8] = []
    RowCodec.encode(values, layout: layout, into: &bytes)
    return bytes
  }

  /// The id an id key (or an index entry's value) holds, for an id field of `kind`; `nil` when
  /// the bytes are not one, as ``KeyEncoding/decodeID(_:kind:)`` reads it.
  public static func decodeIDKey(_ key: [UInt8], kind: FieldKind) -> Value? {
    key.withUnsafeBytes { KeyEncoding.decodeID($0, kind: kind) }
  }

  /// The key an id is stored under (``KeyEncoding/idKey(_:)``), and the one the stack-built
  /// path (``KeyEncoding/withIDKey(_:_:)``) makes, which must be the same.
  public static func idKeys(_ id: Value) -> (built: [UInt8], onStack: [UInt8]) {
    (KeyEncoding.idKey(id), KeyEncoding.withIDKey(id) { Array($0) })
  }

  /// The index key of `values` (one component per value, ``KeyEncoding/appendComponent(_:to:)``).
  public static func indexKey(_ values: [Value]) -> [UInt8] {
    var key: [UInt8] = []
    for value in values { KeyEncoding.appendComponent(value, to: &key) }
    return key
  }

  /// Decodes an entity's catalog entry the way a read of the catalog does.
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that are not an entry.
  public static func decodeCatalogEntry(_ bytes: [UInt8], entity: String) throws -> CatalogEntry {
    let record = try Catalog.decodeRecord(Data(bytes), entity: entity, context: context)
    return CatalogEntry(
      layouts: record.layouts, current: record.current, rows: record.rows, indexes: record.indexes)
  }

  /// The bytes the catalog stores an entry as.
  public static func encodeCatalogEntry(_ entry: CatalogEntry) throws -> [UInt8] {
    try Catalog.encodeRecord(
      Catalog.EntityRecord(
        layouts: entry.layouts, current: entry.current, rows: entry.rows, indexes: entry.indexes))
  }

  /// Checks the catalog's `format` entry the way opening a store does.
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that do not describe a store this
  ///   Coffer opens.
  public static func checkCatalogFormat(_ bytes: [UInt8]) throws {
    try Catalog.checkFormat(Data(bytes), context: context)
  }

  /// Decodes one of the catalog's migration entries the way listing the migrations does.
  ///
  /// - Throws: ``CofferError`` — and only that — for bytes that are not a record.
  public static func decodeCatalogMigration(_ bytes: [UInt8]) throws -> MigrationRecord {
    try MigrationRecord(encoded: Data(bytes), store: context.name)
  }
}
