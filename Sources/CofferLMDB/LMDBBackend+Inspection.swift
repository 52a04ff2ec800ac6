import CLMDB
@_spi(Backend) import Coffer
import Foundation

/// LMDB's main database, which lists the named databases (`MAIN_DBI` in liblmdb, not exported).
private let mainDatabase = MDB_dbi(1)

@_spi(Backend) extension LMDBBackend: StorageInspecting {
  /// The catalog's format version, the size of `data.mdb`, and LMDB's own figures: library
  /// version, map size and its maximum, page size, pages used, last transaction, readers, the
  /// number of databases, and the entries of each database of the entities this handle prepared.
  /// Reads the environment's header and the catalog's format entry, no row.
  public func describeStorage() async throws -> StorageDescription {
    try checkOpen()
    let prepared = entities.withLock { Array($0.values) }.sorted { $0.schema.name < $1.schema.name }
    let context = environment.context
    return try environment.read { transaction in
      var description = StorageDescription(bytesOnDisk: fileSize(path + "/data.mdb"))
      if let bytes = try transaction.get(catalog, Array("format".utf8)),
        let format = try? JSONDecoder().decode(Catalog.Format.self, from: Data(bytes))
      {
        description.formatVersion = String(format.version)
      }
      var info = MDB_envinfo()
      try context.check(mdb_env_info(environment.handle, &info), "read the store's header")
      var main = MDB_stat()
      try context.check(mdb_stat(transaction.pointer, mainDatabase, &main), "read the store's statistics")
      var major: Int32 = 0
      var minor: Int32 = 0
      var patch: Int32 = 0
      _ = mdb_version(&major, &minor, &patch)
      description.details = [
        .init("lmdb", "\(major).\(minor).\(patch)"),
        .init("map_size", ByteSize.format(info.me_mapsize)),
        .init("max_map_size", ByteSize.format(environment.maxMapSize)),
        .init("page_size", String(main.ms_psize)),
        .init("pages_used", String(info.me_last_pgno + 1)),
        .init("last_transaction", String(info.me_last_txnid)),
        .init("readers", "\(info.me_numreaders) of \(info.me_maxreaders)"),
        .init("databases", String(main.ms_entries)),
      ]
      for handle in prepared {
        // The names the catalog records: a relabelled entity's are not built from its name.
        guard let record = try? Catalog.record(handle.schema.name, in: transaction, catalog: catalog) else {
          continue
        }
        // Every index writes keep, each under its own name (a handle made again after another
        // process's prepare walks only some of them).
        let databases = [(record.rows, handle.rows)] + handle.writer.indexes.map { ($0.name, $0.database) }
        for (name, database) in databases {
          guard let entries = try? transaction.entryCount(database) else { continue }
          description.details.append(.init(name, "\(entries) entries"))
        }
      }
      return description
    }
  }

  /// Walks the whole store in one read transaction: every row decodes and is stored under its
  /// own id; every row has an entry in each index of its entity, under the key its values make;
  /// every index entry names a stored row whose values make the entry's key; no two rows share
  /// a key of a unique index; the catalog names every LMDB database there is, and each it names
  /// is there (rows in a plain database, indexes in sorted-duplicates ones).
  ///
  /// Covers every entity the catalog records, prepared by this handle or not. The databases are
  /// first opened by name in a write transaction that writes nothing (liblmdb opens database
  /// handles safely only there); the walk then runs on a thread of its own, off the Swift
  /// concurrency pool, while writers go on (the map cannot grow until it ends). At most
  /// ``checkProblemLimit`` problems are listed, and a last one says how many more there were.
  public func checkStorage() async throws -> [IntegrityProblem] {
    try checkOpen()
    let queue = BlockingQueue(label: "coffer.lmdb.check")
    // A database made by another process between opening and walking is opened on a new try.
    for _ in 0..<3 {
      let opened = try await environment.writeOffPool { transaction in try LMDBDatabases(opening: transaction)
      }
      let problems = try await queue.run { [self] in
        try environment.read { transaction in
          var check = LMDBStorageCheck(backend: self, transaction: transaction, opened: opened)
          return try check.run()
        }
      }
      if let problems { return problems }
    }
    throw CofferError(
      .conflict,
      "The store's LMDB databases kept changing while it was being checked (another process is preparing "
        + "entities). Check it again when that is done.",
      store: name, path: path)
  }

  /// The most problems ``checkStorage()`` lists; a damaged store may have one per row.
  static var checkProblemLimit: Int { 1_000 }
}

/// A file's size in bytes, or `nil` when it is not there.
private func fileSize(_ path: String) -> Int64? {
  ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
}

/// Every named database of an environment, opened for a check, and the entries of the main
/// database that are not databases.
struct LMDBDatabases: Sendable {
  /// Database handles by name.
  var handles: [String: MDB_dbi] = [:]
  /// The keys of the main database that name no database (or cannot name one).
  var plainKeys: Set<[UInt8]> = []

  /// Opens every database the main database lists, in `transaction` (a write transaction, which
  /// this changes nothing in: its commit writes no page).
  init(opening transaction: Transaction) throws {
    var keys: [[UInt8]] = []
    try transaction.withCursor(mainDatabase) { cursor in
      var found = try cursor.move(MDB_FIRST)
      while found {
        keys.append(Array(cursor.key))
        found = try cursor.move(MDB_NEXT)
      }
    }
    for key in keys {
      guard !key.contains(0), let name = String(validating: key, as: UTF8.self) else {
        plainKeys.insert(key)
        continue
      }
      var database: MDB_dbi = 0
      let code = mdb_dbi_open(transaction.pointer, name, 0, &database)
      if code == MDB_INCOMPATIBLE {
        plainKeys.insert(key)
        continue
      }
      try transaction.context.check(code, "open the LMDB database '\(name)'")
      handles[name] = database
    }
  }
}

/// One walk of ``LMDBBackend/checkStorage()`` in one read transaction, noting what it finds.
struct LMDBStorageCheck {
  let backend: LMDBBackend
  let transaction: Transaction
  let opened: LMDBDatabases
  private var problems: [IntegrityProblem] = []
  private var omitted = 0

  init(backend: LMDBBackend, transaction: Transaction, opened: LMDBDatabases) {
    self.backend = backend
    self.transaction = transaction
    self.opened = opened
  }

  /// The problems found, or `nil` when the main database lists a database that was not opened
  /// (made since): the check must open the databases again.
  mutating func run() throws -> [IntegrityProblem]? {
    let transaction = self.transaction
    var listed: Set<String> = []
    var plainKeys = 0
    var appeared = false
    try transaction.withCursor(mainDatabase) { cursor in
      var found = try cursor.move(MDB_FIRST)
      while found {
        let key = Array(cursor.key)
        if let name = String(validating: key, as: UTF8.self), opened.handles[name] != nil {
          listed.insert(name)
        } else if opened.plainKeys.contains(key) {
          plainKeys += 1
        } else {
          appeared = true
        }
        found = try cursor.move(MDB_NEXT)
      }
    }
    if appeared { return nil }
    if plainKeys > 0 {
      note(
        IntegrityProblem(
          "LMDB's main database holds \(plainKeys) entr\(plainKeys == 1 ? "y" : "ies") that \(plainKeys == 1 ? "is" : "are") "
            + "not a database; something other than Coffer wrote \(plainKeys == 1 ? "it" : "them")."))
    }
    guard listed.contains(Catalog.databaseName), let catalog = opened.handles[Catalog.databaseName] else {
      note(
        IntegrityProblem(
          "The store's catalog database ('coffer') is missing. Restore the store from a backup."))
      return finished()
    }
    try checkFormat(catalog)
    let entities = try Catalog.entityNames(in: transaction, catalog: catalog)
    // Dropped entities' databases stay, emptied, listed as retired.
    let retired = try Catalog.retiredNames(in: transaction, catalog: catalog)
    for name in retired.sorted() {
      guard let database = opened.handles[name], try transaction.entryCount(database) > 0 else { continue }
      note(
        IntegrityProblem(
          "The LMDB database '\(name)' of a dropped entity holds entries: a handle that did not know of the drop "
            + "wrote to it. Coffer never reads it."))
    }
    var named = retired.union([Catalog.databaseName])
    if let feed = try transaction.get(catalog, LMDBChangeFeed.databaseKey) {
      named.insert(String(decoding: feed, as: UTF8.self))
    }
    for entity in entities {
      let record: Catalog.EntityRecord
      do {
        guard let found = try Catalog.record(entity, in: transaction, catalog: catalog) else { continue }
        record = found
      } catch let error as CofferError where error.code == .corruptStore {
        note(IntegrityProblem(entity: entity, error.message))
        continue
      }
      named.insert(record.rows)
      named.formUnion(record.indexes)
      try checkEntity(entity, record, listed: listed)
    }
    for name in listed.sorted() where !named.contains(name) {
      note(
        IntegrityProblem(
          entity: owner(of: name, among: entities),
          "The LMDB database '\(name)' is not named by the catalog: something other than Coffer made it, or it "
            + "was left behind. Coffer never reads it."))
    }
    return finished()
  }

  /// The problems, with a last one counting those left out.
  private func finished() -> [IntegrityProblem] {
    guard omitted > 0 else { return problems }
    return problems + [
      IntegrityProblem("\(omitted) more problem\(omitted == 1 ? " was" : "s were") found but not listed.")
    ]
  }

  private mutating func note(_ problem: IntegrityProblem) {
    if problems.count < LMDBBackend.checkProblemLimit {
      problems.append(problem)
    } else {
      omitted += 1
    }
  }

  /// Checks the catalog's `format` entry.
  private mutating func checkFormat(_ catalog: MDB_dbi) throws {
    guard let bytes = try transaction.get(catalog, Array("format".utf8)),
      let format = try? JSONDecoder().decode(Catalog.Format.self, from: Data(bytes)),
      format.format == "coffer-lmdb"
    else {
      note(
        IntegrityProblem("The catalog's format entry is missing or damaged. Restore the store from a backup.")
      )
      return
    }
  }

  /// The entity a database name not in the catalog seems to belong to, if the catalog has it.
  private func owner(of database: String, among entities: [String]) -> String? {
    if database.hasPrefix("rows:") {
      let entity = String(database.dropFirst(5))
      return entities.contains(entity) ? entity : nil
    }
    for prefix in ["index:", "unique:"] where database.hasPrefix(prefix) {
      let rest = database.dropFirst(prefix.count)
      return entities.filter { rest.hasPrefix($0 + ":") }.max { $0.utf8.count < $1.utf8.count }
    }
    return nil
  }

  /// The flags a database was made with.
  private func flags(_ database: MDB_dbi) throws -> UInt32 {
    var flags: UInt32 = 0
    try transaction.context.check(mdb_dbi_flags(transaction.pointer, database, &flags), "read the store")
    return flags
  }

  /// Checks an entity's databases, rows and index entries.
  private mutating func checkEntity(_ entity: String, _ record: Catalog.EntityRecord, listed: Set<String>)
    throws
  {
    let schema = record.layouts[record.current]
    guard listed.contains(record.rows), let rows = opened.handles[record.rows] else {
      note(
        IntegrityProblem(
          entity: entity,
          "Its rows database '\(record.rows)' is missing: every row of it is gone. Restore the store from a backup."
        ))
      return
    }
    if try flags(rows) & UInt32(MDB_DUPSORT) != 0 {
      note(
        IntegrityProblem(
          entity: entity,
          "Its rows database '\(record.rows)' allows several values per key; something other than Coffer made it."
        ))
      return
    }
    var indexes: [IndexHandle] = []
    for (index, name) in zip(schema.indexes, record.indexes) {
      guard listed.contains(name), let database = opened.handles[name] else {
        note(
          IntegrityProblem(
            entity: entity, field: index.name,
            "Its index database '\(name)' is missing, so queries that use the index fail. Restore the store from a "
              + "backup, or prepare the entity without the index and then with it again."))
        continue
      }
      guard try flags(database) & UInt32(MDB_DUPSORT) != 0 else {
        note(
          IntegrityProblem(
            entity: entity, field: index.name,
            "Its index database '\(name)' is not a sorted-duplicates database; something other than Coffer made it."
          ))
        continue
      }
      indexes.append(
        IndexHandle(
          index: index, positions: index.fields.compactMap { schema.position(of: $0) }, database: database,
          name: name))
    }
    let handle = EntityHandle(
      schema: schema, layout: record.current, rows: rows, indexes: indexes,
      evolutions: backend.evolutions(record, to: schema, except: record.current))
    try checkRows(handle)
    for index in indexes { try checkEntries(of: index, handle) }
  }

  /// Checks that every row decodes, is stored under its own id, and has its entry in each index.
  private mutating func checkRows(_ handle: EntityHandle) throws {
    let transaction = self.transaction
    let schema = handle.schema
    let kind = schema.idField.kind
    try Self.withCursors(handle.indexes.map(\.database), in: transaction) { indexCursors in
      var key: [UInt8] = []
      try transaction.withCursor(handle.rows) { cursor in
        var found = try cursor.move(MDB_FIRST)
        while found {
          let id = KeyEncoding.decodeID(cursor.key, kind: kind)
          if id == nil {
            note(
              IntegrityProblem(
                entity: schema.name,
                "A row is stored under a key of \(cursor.key.count) bytes that is not the key of a \(kind) id; "
                  + "no lookup by id finds it."))
          }
          do {
            let values = try backend.decode(cursor.data, key: cursor.key, handle: handle, in: transaction)
            if let id, values[schema.idPosition] != id {
              note(
                IntegrityProblem(
                  entity: schema.name, id: id, field: schema.idField.name,
                  "The row stored under this id holds the id \(values[schema.idPosition]) instead."))
            }
            for (index, indexCursor) in zip(handle.indexes, indexCursors) {
              index.key(values, into: &key)
              guard try contains(indexCursor, key, cursor.key) else {
                note(
                  IntegrityProblem(
                    entity: schema.name, id: id, field: index.index.name,
                    "Its entry in the index on \(index.index.fields.joined(separator: ", ")) is missing, so "
                      + "queries that use the index do not find it."))
                continue
              }
            }
          } catch let error as CofferError where error.code == .corruptStore || error.code == .schemaMismatch
          {
            note(IntegrityProblem(entity: schema.name, id: id, error.message))
          }
          found = try cursor.move(MDB_NEXT)
        }
      }
    }
  }

  /// Checks that every entry of an index names a stored row whose values make the entry's key,
  /// and that no two rows share a key of a unique index (unless the key holds a null).
  private mutating func checkEntries(of index: IndexHandle, _ handle: EntityHandle) throws {
    let transaction = self.transaction
    let schema = handle.schema
    let fields = index.index.fields.joined(separator: ", ")
    var expected: [UInt8] = []
    var group: (key: [UInt8], first: Value?, reported: Bool)?
    try transaction.withCursor(index.database) { cursor in
      var found = try cursor.move(MDB_FIRST)
      while found {
        let id = KeyEncoding.decodeID(cursor.data, kind: schema.idField.kind)
        let repeated = group.map { cursor.key.elementsEqual($0.key) } ?? false
        if !repeated { group = (Array(cursor.key), id, false) }
        if let bytes = try transaction.get(handle.rows, cursor.data) {
          // A row that does not decode is reported by the walk over the rows.
          if let values = try? backend.decode(bytes, key: cursor.data, handle: handle, in: transaction) {
            let hasNull = index.key(values, into: &expected)
            if !cursor.key.elementsEqual(expected) {
              note(
                IntegrityProblem(
                  entity: schema.name, id: id, field: index.index.name,
                  "An entry of the index on \(fields) names this row under values it does not hold, so queries "
                    + "that use the index find it where it does not belong."))
            } else if index.index.isUnique, !hasNull, repeated, group?.reported == false {
              group?.reported = true
              let other = group?.first.map { "\(schema.name) \($0)" } ?? "another row"
              note(
                IntegrityProblem(
                  entity: schema.name, id: id, field: index.index.name,
                  "It has the same \(fields) as \(other), but the index is unique."))
            }
          }
        } else {
          note(
            IntegrityProblem(
              entity: schema.name, id: id, field: index.index.name,
              "An entry of the index on \(fields) names a row that is not stored, so queries that use the index "
                + "fail."))
        }
        found = try cursor.move(MDB_NEXT)
      }
    }
  }

  /// Runs `body` with a raw cursor on each database, closing them afterwards.
  private static func withCursors<R>(
    _ databases: [MDB_dbi], in transaction: Transaction, _ body: ([OpaquePointer]) throws -> R
  ) throws -> R {
    var cursors: [OpaquePointer] = []
    defer { for cursor in cursors { mdb_cursor_close(cursor) } }
    for database in databases {
      var cursor: OpaquePointer?
      try transaction.context.check(mdb_cursor_open(transaction.pointer, database, &cursor), "open a cursor")
      guard let cursor else { throw transaction.context.error(MDB_INVALID, "open a cursor") }
      cursors.append(cursor)
    }
    return try body(cursors)
  }

  /// Whether a sorted-duplicates database holds the pair `key`, `data`.
  private func contains(_ cursor: OpaquePointer, _ key: [UInt8], _ data: UnsafeRawBufferPointer) throws
    -> Bool
  {
    let code = key.withUnsafeBytes { keyBytes in
      var keyValue = MDB_val(
        mv_size: keyBytes.count, mv_data: UnsafeMutableRawPointer(mutating: keyBytes.baseAddress))
      var dataValue = MDB_val(
        mv_size: data.count, mv_data: UnsafeMutableRawPointer(mutating: data.baseAddress))
      return mdb_cursor_get(cursor, &keyValue, &dataValue, MDB_GET_BOTH)
    }
    // A key longer than LMDB holds cannot be in the index either.
    if code == MDB_NOTFOUND || code == MDB_BAD_VALSIZE { return false }
    try transaction.context.check(code, "read the store")
    return true
  }
}
