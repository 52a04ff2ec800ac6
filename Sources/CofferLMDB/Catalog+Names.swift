import CLMDB
@_spi(Backend) import Coffer

extension Catalog {
  /// LMDB's main database, which lists the named databases (`MAIN_DBI` in liblmdb, not exported).
  static let mainDatabase = MDB_dbi(1)

  /// The key of a dropped entity's database, kept empty and never given to another entity.
  static func retiredKey(_ database: String) -> [UInt8] { Array("retired:\(database)".utf8) }

  /// A database name for a new rows or index database: `base` (a name from
  /// ``databaseNames(for:context:)``) when no database has it, otherwise `base~2`, `base~3`, …,
  /// the first no database has. Names are never reused: a relabelled entity keeps its databases'
  /// names and a dropped one leaves its databases behind, emptied, so a handle another reader
  /// still holds never reaches another entity's rows. `taken` are names chosen but not yet made.
  static func unusedName(
    _ base: String, entity: String, taken: Set<String> = [], in transaction: Transaction
  ) throws -> String {
    var candidate = base
    var suffix = 1
    func isTaken(_ name: String) throws -> Bool {
      try taken.contains(name) || transaction.get(mainDatabase, Array(name.utf8)) != nil
    }
    while try isTaken(candidate) {
      suffix += 1
      candidate = "\(base)~\(suffix)"
    }
    if candidate.utf8.count > 480 {
      let context = transaction.context
      throw CofferError(
        .invalidSchema,
        "The LMDB database name for entity '\(entity)' (its name and index fields) is longer than 480 bytes; "
          + "use shorter names.",
        store: context.name, entity: entity, path: context.path)
    }
    return candidate
  }

  /// Names for a new entity's index databases, one per name of `bases`, in its order, each
  /// ``unusedName(_:entity:taken:in:)``.
  static func unusedNames(_ bases: [String], entity: String, in transaction: Transaction) throws -> [String] {
    var chosen: [String] = []
    for base in bases {
      chosen.append(try unusedName(base, entity: entity, taken: Set(chosen), in: transaction))
    }
    return chosen
  }

  /// The databases of dropped entities: emptied, kept and listed so that nothing mistakes them
  /// for databases something else left behind.
  static func retiredNames(in transaction: Transaction, catalog: MDB_dbi) throws -> Set<String> {
    let prefix = retiredKey("")
    var names: Set<String> = []
    try transaction.withCursor(catalog) { cursor in
      var found = try cursor.seek(prefix)
      while found, cursor.key.starts(with: prefix) {
        names.insert(String(decoding: cursor.key.dropFirst(prefix.count), as: UTF8.self))
        found = try cursor.move(MDB_NEXT)
      }
    }
    return names
  }

  /// Empties a dropped entity's database and lists it as retired. The database itself stays
  /// (`mdb_drop` with `del` 0): deleting it would close its handle for every transaction of the
  /// process, readers included, and free its name for another entity.
  static func retire(_ database: String, in transaction: Transaction, catalog: MDB_dbi, flags: Int32) throws {
    if let handle = try transaction.open(database, flags: flags) {
      try transaction.drop(handle, delete: false)
    }
    try transaction.put(catalog, retiredKey(database), [])
  }
}
