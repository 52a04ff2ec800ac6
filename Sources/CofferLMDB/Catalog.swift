import CLMDB
@_spi(Backend) import Coffer
import Foundation

/// The `coffer` database of a store: its format and, per entity, the schemas its rows were
/// written under and the names of its LMDB databases (Docs/Formats.md, "LMDB stores").
enum Catalog {
  /// The catalog database's name.
  static let databaseName = "coffer"
  /// The store format this Coffer writes, and the newest it opens.
  static let formatVersion = 1

  /// The catalog's `format` entry.
  struct Format: Codable {
    var format: String
    var version: Int
  }

  /// An entity's entry, under the key `entity:NAME`.
  struct EntityRecord: Codable, Equatable {
    /// Every schema rows have been written under; a row's layout number indexes this list.
    var layouts: [EntitySchema]
    /// The layout of the schema last prepared.
    var current: Int
    /// The database holding the rows: id key → row.
    var rows: String
    /// One database per index of the current schema, in its order: index key → id keys.
    var indexes: [String]
  }

  /// Opens the catalog, creating it in a new environment; refuses an environment that holds
  /// other databases but no catalog (an LMDB store some other program made) and one written by
  /// a newer Coffer.
  static func open(in transaction: Transaction) throws -> MDB_dbi {
    let context = transaction.context
    if let database = try transaction.open(databaseName, flags: 0) {
      try checkFormat(try transaction.get(database, Array("format".utf8)).map { Data($0) }, context: context)
      return database
    }
    guard let main = try transaction.open(nil, flags: 0) else {
      throw context.error(MDB_INVALID, "read the store's main database")
    }
    guard try transaction.entryCount(main) == 0 else {
      throw CofferError(
        .corruptStore,
        "This directory holds an LMDB store that Coffer did not create (it has no '\(databaseName)' catalog). "
          + "It was left untouched; name another directory.",
        store: context.name, path: context.path)
    }
    guard let database = try transaction.open(databaseName, flags: MDB_CREATE) else {
      throw context.error(MDB_NOTFOUND, "create the store's catalog")
    }
    let format = try JSONEncoder().encode(Format(format: "coffer-lmdb", version: formatVersion))
    try transaction.put(database, Array("format".utf8), Array(format))
    return database
  }

  /// Checks the catalog's `format` entry (`nil` when it has none): it must describe a Coffer
  /// store of a format this Coffer reads.
  static func checkFormat(_ bytes: Data?, context: StoreContext) throws {
    guard let bytes, let format = try? JSONDecoder().decode(Format.self, from: bytes),
      format.format == "coffer-lmdb"
    else {
      throw CofferError(
        .corruptStore,
        "This LMDB store has a '\(databaseName)' database that does not describe a Coffer store. It was left "
          + "untouched; name another directory.",
        store: context.name, path: context.path)
    }
    guard format.version <= formatVersion else {
      throw CofferError(
        .corruptStore,
        "This store was written by a newer Coffer (store format \(format.version); this one reads up to "
          + "\(formatVersion)). Upgrade Coffer to open it; it was left untouched.",
        store: context.name, path: context.path)
    }
  }

  /// The entry of an entity, or `nil` when it was never prepared.
  static func record(_ entity: String, in transaction: Transaction, catalog: MDB_dbi) throws -> EntityRecord?
  {
    guard let bytes = try transaction.get(catalog, key(entity)) else { return nil }
    return try decodeRecord(Data(bytes), entity: entity, context: transaction.context)
  }

  /// An entity's entry from its stored bytes, checked: its current layout exists and has as
  /// many ordered indexes as the entry has index databases (a text index has none yet: its
  /// searches read the rows).
  static func decodeRecord(_ bytes: Data, entity: String, context: StoreContext) throws -> EntityRecord {
    do {
      let record = try JSONDecoder().decode(EntityRecord.self, from: bytes)
      guard record.layouts.indices.contains(record.current),
        record.indexes.count == record.layouts[record.current].orderedIndexes.count
      else { throw CocoaError(.coderInvalidValue) }
      return record
    } catch {
      throw CofferError(
        .corruptStore,
        "The catalog entry of entity '\(entity)' is damaged. Restore the store from a backup.",
        store: context.name, entity: entity, path: context.path, underlying: error)
    }
  }

  /// The names of the entities the catalog has an entry for, sorted.
  static func entityNames(in transaction: Transaction, catalog: MDB_dbi) throws -> [String] {
    let prefix = key("")
    var entities: [String] = []
    try transaction.withCursor(catalog) { cursor in
      var found = try cursor.seek(prefix)
      while found, cursor.key.starts(with: prefix) {
        entities.append(String(decoding: cursor.key.dropFirst(prefix.count), as: UTF8.self))
        found = try cursor.move(MDB_NEXT)
      }
    }
    return entities.sorted()
  }

  /// The current schema of every entity in the catalog, sorted by name.
  static func schemas(in transaction: Transaction, catalog: MDB_dbi) throws -> [EntitySchema] {
    try entityNames(in: transaction, catalog: catalog).compactMap { entity in
      try record(entity, in: transaction, catalog: catalog).map { $0.layouts[$0.current] }
    }
  }

  /// Stores an entity's entry.
  static func write(_ record: EntityRecord, for entity: String, in transaction: Transaction, catalog: MDB_dbi)
    throws
  {
    try transaction.put(catalog, key(entity), try encodeRecord(record))
  }

  /// The stored bytes of an entity's entry: JSON with sorted keys.
  static func encodeRecord(_ record: EntityRecord) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    return Array(try encoder.encode(record))
  }

  static func key(_ entity: String) -> [UInt8] { Array("entity:\(entity)".utf8) }

  /// The LMDB database names of an entity: `rows:ENTITY`, and `index:ENTITY:FIELDS` or
  /// `unique:ENTITY:FIELDS` per ordered index (fields joined by commas).
  static func databaseNames(for schema: EntitySchema, context: StoreContext) throws -> (
    rows: String, indexes: [String]
  ) {
    let rows = "rows:\(schema.name)"
    let indexes = schema.orderedIndexes.map { index in
      "\(index.isUnique ? "unique" : "index"):\(schema.name):\(index.fields.joined(separator: ","))"
    }
    for name in [rows] + indexes where name.utf8.count > 480 || name.utf8.contains(0) {
      throw CofferError(
        .invalidSchema,
        "The LMDB database name for entity '\(schema.name)' (its name and index fields) is longer than 480 bytes "
          + "or holds a NUL character; use shorter names.",
        store: context.name, entity: schema.name, path: context.path)
    }
    return (rows, indexes)
  }
}
