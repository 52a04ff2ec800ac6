import CSQLite
@_spi(Backend) import Coffer
import CofferSQL
import Foundation

@_spi(Backend) extension SQLiteBackend: StorageInspecting {
  /// The file's format version (`PRAGMA user_version`, `nil` before the first prepare), the
  /// bytes of the database file and its write-ahead log, and SQLite's own figures: library
  /// version, journal mode, page size, page count and free pages. Reads the file's header, no row.
  public func describeStorage() async throws -> StorageDescription {
    try checkOpen()
    return try readers.withReader { reader in
      func pragma(_ name: String) throws -> String {
        try reader.text("PRAGMA \(name)") ?? "unknown"
      }
      let version = try reader.text("PRAGMA user_version").flatMap { Int($0) } ?? 0
      var description = StorageDescription(
        formatVersion: version > 0 ? String(version) : nil, bytesOnDisk: Self.bytesOnDisk(of: path))
      description.details = [
        .init("sqlite", String(cString: sqlite3_libversion())),
        .init("journal_mode", try pragma("journal_mode")),
        .init("page_size", try pragma("page_size")),
        .init("page_count", try pragma("page_count")),
        .init("freelist_count", try pragma("freelist_count")),
      ]
      if let wal = Self.fileSize(path + "-wal") {
        description.details.append(.init("wal_bytes", String(wal)))
      }
      return description
    }
  }

  /// Runs `PRAGMA integrity_check` (the b-trees, and every index against its table) and checks
  /// that each entity the `coffer_schema` table records still has its table, its columns (of the
  /// declared types, the id the primary key) and its indexes. Each finding is one problem, named
  /// by entity, and by field or index where SQLite's message or the catalog tells which.
  ///
  /// Runs on a reader connection in one read transaction, on a thread of its own (off the Swift
  /// concurrency pool: a check reads the whole file); writers go on meanwhile. The database
  /// declares no foreign keys, so `PRAGMA foreign_key_check` has nothing to find.
  public func checkStorage() async throws -> [IntegrityProblem] {
    try checkOpen()
    let queue = BlockingQueue(label: "coffer.sqlite.check")
    return try await queue.run { [self] in
      try readers.withReader { reader in
        try reader.run("BEGIN")
        defer { try? reader.run("COMMIT") }
        let layout = try SQLiteLayout(on: reader)
        var problems = try integrityProblems(on: reader, layout: layout)
        problems += try catalogProblems(on: reader, layout: layout)
        return problems
      }
    }
  }

  /// The bytes of the database file and of its write-ahead log; `nil` when the file is not there.
  static func bytesOnDisk(of path: String) -> Int64? {
    guard let main = fileSize(path) else { return nil }
    return main + (fileSize(path + "-wal") ?? 0)
  }

  /// A file's size in bytes, or `nil` when it is not there.
  static func fileSize(_ path: String) -> Int64? {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value
  }

  /// `PRAGMA integrity_check`'s findings, each a problem placed where its message names: an
  /// index (the entity and index), a column (the entity and field) or a b-tree by root page.
  private func integrityProblems(on reader: SQLiteConnection, layout: SQLiteLayout) throws
    -> [IntegrityProblem]
  {
    let statement = try reader.statement("PRAGMA integrity_check")
    var messages: [String] = []
    try statement.withBindings([]) {
      while try statement.stepReading() { messages.append(statement.string(at: 0)) }
    }
    if messages == ["ok"] { return [] }
    return
      messages
      .flatMap { $0.split(separator: "\n").map(String.init) }
      .filter { !$0.isEmpty && !$0.hasPrefix("*** in database") }
      .map { layout.place("SQLite's integrity check: \($0)") }
  }

  /// Where the catalog and the database's schema disagree: a recorded entity whose table,
  /// column or declared index is missing or not as Coffer made it.
  private func catalogProblems(on reader: SQLiteConnection, layout: SQLiteLayout) throws -> [IntegrityProblem]
  {
    guard layout.tables[SQLiteIdentifier.folded(SQLiteCatalog.tableName)] != nil else {
      guard let version = try reader.text("PRAGMA user_version"), version != "0" else { return [] }
      return [
        IntegrityProblem(
          "The coffer_schema table, which records the stored entities, is missing (the file is format "
            + "\(version)). Restore the file from a backup.")
      ]
    }
    var entities: [String] = []
    let statement = try reader.statement(#"SELECT "entity" FROM "coffer_schema""#)
    try statement.withBindings([]) {
      while try statement.stepReading() { entities.append(statement.string(at: 0)) }
    }
    var problems: [IntegrityProblem] = []
    for entity in entities.sorted() {
      let record: SQLiteCatalog.Record
      do {
        guard let read = try SQLiteCatalog.read(entity, on: reader) else { continue }
        record = read
      } catch let error as CofferError where error.code == .corruptStore {
        problems.append(IntegrityProblem(entity: entity, error.message))
        continue
      }
      problems += try entityProblems(record, on: reader, layout: layout)
    }
    return problems
  }

  /// How one recorded entity's table differs from what its record says.
  private func entityProblems(
    _ record: SQLiteCatalog.Record, on reader: SQLiteConnection, layout: SQLiteLayout
  )
    throws -> [IntegrityProblem]
  {
    let schema = record.schema
    let tableName = record.tableName
    guard layout.tables[SQLiteIdentifier.folded(tableName)] != nil else {
      return [
        IntegrityProblem(
          entity: schema.name,
          "Its table '\(tableName)' is missing: something other than Coffer dropped it. Restore the file from a "
            + "backup.")
      ]
    }
    var problems: [IntegrityProblem] = []
    let columns = try SQLiteColumnInfo.columns(of: tableName, on: reader)
    for (position, field) in schema.fields.enumerated() {
      let column = record.columns[position]
      guard let info = columns[SQLiteIdentifier.folded(column)] else {
        problems.append(
          IntegrityProblem(
            entity: schema.name, field: field.name,
            "Its column '\(column)' is missing from table '\(tableName)': something other than Coffer dropped "
              + "it. Restore the file from a backup."))
        continue
      }
      let expected = SQLiteTable.columnType(field.kind)
      if info.type.uppercased() != expected {
        problems.append(
          IntegrityProblem(
            entity: schema.name, field: field.name,
            "Its column '\(column)' is declared \(info.type.isEmpty ? "without a type" : info.type), but Coffer "
              + "stores a \(field.kind) field in a \(expected) column."))
      }
      if position == schema.idPosition, !info.isPrimaryKey {
        problems.append(
          IntegrityProblem(
            entity: schema.name, field: field.name,
            "Its id column '\(column)' is not the primary key of table '\(tableName)', so ids may repeat."))
      }
    }
    problems += try indexProblems(record, on: reader)
    return problems
  }

  /// The declared indexes that no index of the table holds, and Coffer's indexes (named like
  /// Coffer names them) that hold no declared index. Indexes are matched by what they cover,
  /// not by name: after a relabel, an index keeps a name that holds the former table or column
  /// name (see ``SQLiteIndex``).
  private func indexProblems(_ record: SQLiteCatalog.Record, on reader: SQLiteConnection) throws
    -> [IntegrityProblem]
  {
    let schema = record.schema
    let wanted = SQLiteIndex.wanted(by: schema, tableName: record.tableName, columns: record.columns)
    let match = SQLiteIndex.match(wanted, with: try SQLiteIndex.indexes(of: record.tableName, on: reader))
    var undeclared = match.undeclared
    var problems: [IntegrityProblem] = []
    for (entry, found) in match.declared where found == nil {
      let index = entry.index
      // An index under the name Coffer gave this one, over something else: it was changed.
      if let changed = undeclared.firstIndex(where: { $0.name == entry.usualName }) {
        let info = undeclared.remove(at: changed)
        let shape = info.isPartial ? "a partial" : info.isUnique ? "a unique" : "a non-unique"
        let columns = info.columns.isEmpty ? "an expression" : info.columns.joined(separator: ", ")
        problems.append(
          IntegrityProblem(
            entity: schema.name, field: index.name,
            "Its index '\(info.name)' was changed by something other than Coffer: it is "
              + "\(shape) index on \(columns). Drop it and create it again as declared, or restore the file.")
        )
        continue
      }
      let kind = index.isUnique ? "unique index" : "index"
      problems.append(
        IntegrityProblem(
          entity: schema.name, field: index.name,
          "Its \(kind) on \(index.fields.joined(separator: ", ")) ('\(entry.usualName)') is missing: something "
            + "other than Coffer dropped it\(index.isUnique ? ", so the values are no longer kept unique" : ""). "
            + "Create it again (sqlite3: CREATE \(index.isUnique ? "UNIQUE " : "")INDEX …) or restore the file."
        ))
    }
    for index in undeclared {
      problems.append(
        IntegrityProblem(
          entity: schema.name,
          "Table '\(record.tableName)' has an index '\(index.name)' that the stored schema does not declare; "
            + "something other than Coffer made it. Drop it."))
    }
    return problems
  }
}

/// The tables and indexes of a database, with the entities, fields and indexes they hold, for
/// naming the places SQLite's messages mention.
struct SQLiteLayout {
  /// Where a table or index is: its entity and, for an index, the index's name (`unique:email`).
  struct Place {
    var entity: String?
    var field: String?
  }

  /// Tables by folded name.
  var tables: [String: Place] = [:]
  /// Indexes by exact name.
  var indexes: [String: Place] = [:]
  /// The columns of each table by folded table name, as table column to field name.
  var fields: [String: [String: String]] = [:]
  /// Every table and index, by the root page of its b-tree.
  var roots: [Int64: (name: String, place: Place)] = [:]

  /// Reads `sqlite_schema` and the `coffer_schema` table (a record that cannot be read is left
  /// out; the catalog check reports it).
  init(on reader: SQLiteConnection) throws {
    var entitiesByTable: [String: (entity: String, record: SQLiteCatalog.Record)] = [:]
    let hasCatalog =
      try reader.text(
        "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?1",
        [.string(SQLiteCatalog.tableName)]) == "1"
    if hasCatalog {
      var entities: [String] = []
      let list = try reader.statement(#"SELECT "entity" FROM "coffer_schema""#)
      try list.withBindings([]) {
        while try list.stepReading() { entities.append(list.string(at: 0)) }
      }
      for entity in entities {
        guard let record = try? SQLiteCatalog.read(entity, on: reader) else { continue }
        entitiesByTable[SQLiteIdentifier.folded(record.tableName)] = (entity, record)
      }
    }
    // The declared index (`unique:email`) each SQLite index holds, found by what it covers.
    var declaredIndexes: [String: String] = [:]
    for (folded, entry) in entitiesByTable {
      let record = entry.record
      fields[folded] = Dictionary(
        zip(record.columns.map(SQLiteIdentifier.folded), record.schema.fields.map(\.name)),
        uniquingKeysWith: { first, _ in first })
      let wanted = SQLiteIndex.wanted(by: record.schema, tableName: record.tableName, columns: record.columns)
      let match = SQLiteIndex.match(wanted, with: try SQLiteIndex.indexes(of: record.tableName, on: reader))
      for case (let wanted, let index?) in match.declared { declaredIndexes[index.name] = wanted.index.name }
    }
    let statement = try reader.statement("SELECT type, name, tbl_name, rootpage FROM sqlite_schema")
    try statement.withBindings([]) {
      while try statement.stepReading() {
        let type = statement.string(at: 0)
        let name = statement.string(at: 1)
        let table = SQLiteIdentifier.folded(statement.string(at: 2))
        let root = statement.int(at: 3)
        let entry = entitiesByTable[table]
        var place = Place(entity: entry?.entity)
        if type == "index" {
          place.field = declaredIndexes[name]
          indexes[name] = place
        } else if type == "table" {
          tables[SQLiteIdentifier.folded(name)] = place
        }
        if root > 0 { roots[root] = (name, place) }
      }
    }
  }

  /// A problem with `message`, placed at the index, column or b-tree the message names.
  func place(_ message: String) -> IntegrityProblem {
    // `… index NAME`: the longest index name that the message names.
    var best: (length: Int, place: Place, name: String)?
    for (name, place) in indexes where message.contains("index \(name)") {
      if name.utf8.count > best?.length ?? -1 { best = (name.utf8.count, place, name) }
    }
    if let best {
      return IntegrityProblem(entity: best.place.entity, field: best.place.field ?? best.name, message)
    }
    // `… value in TABLE.COLUMN`.
    let folded = SQLiteIdentifier.folded(message)
    for (table, columns) in fields {
      for (column, field) in columns where folded.contains(" \(table).\(column)") {
        return IntegrityProblem(entity: tables[table]?.entity, field: field, message)
      }
    }
    // `Tree N page …`: the b-tree whose root page is N.
    if message.hasPrefix("Tree ") {
      let digits = message.dropFirst(5).prefix { $0.isNumber }
      if let root = Int64(digits), let tree = roots[root] {
        return IntegrityProblem(entity: tree.place.entity, field: tree.place.field, message)
      }
    }
    return IntegrityProblem(message)
  }
}

/// What `pragma_table_info` says of a table's columns.
enum SQLiteColumnInfo {
  /// A column's declared type and whether it is (part of) the primary key.
  struct Column {
    var type: String
    var isPrimaryKey: Bool
  }

  /// The columns of a table by folded name.
  static func columns(of table: String, on connection: SQLiteConnection) throws -> [String: Column] {
    let statement = try connection.statement("SELECT name, type, pk FROM pragma_table_info(?1)")
    var columns: [String: Column] = [:]
    try statement.withBindings([.string(table)]) {
      while try statement.stepReading() {
        columns[SQLiteIdentifier.folded(statement.string(at: 0))] = Column(
          type: statement.string(at: 1), isPrimaryKey: statement.int(at: 2) > 0)
      }
    }
    return columns
  }
}
