@_spi(Backend) import Coffer

/// An index Coffer made on a table, known by what it covers rather than by its name.
///
/// Coffer names an index `TABLE/index/COLUMNS` or `TABLE/unique/COLUMNS` when it creates it.
/// SQLite cannot rename an index: when a relabel renames the table or a column, the index
/// follows them (SQLite rewrites its definition) but keeps its name. So an index is matched to
/// the schema's indexes by its definition (unique or not, the columns in order), and its name
/// only tells that Coffer made it.
struct SQLiteIndex: Equatable {
  /// The index's name (unquoted).
  var name: String
  /// Whether it is a unique index.
  var isUnique: Bool
  /// Whether it covers only the rows a `WHERE` clause selects (never one Coffer made).
  var isPartial: Bool
  /// The columns it covers, in order, as the table names them now; empty for an expression.
  var columns: [String]

  /// Whether Coffer gives indexes a name like this one: it holds `/index/` or `/unique/`.
  static func isCofferName(_ name: String) -> Bool {
    name.contains("/index/") || name.contains("/unique/")
  }

  /// Whether this index is one that holds `wanted`: as unique, over the same columns (compared
  /// as SQLite compares names), on every row.
  func holds(_ wanted: Wanted) -> Bool {
    !isPartial && isUnique == wanted.index.isUnique
      && columns.map(SQLiteIdentifier.folded) == wanted.columns.map(SQLiteIdentifier.folded)
  }

  /// The indexes Coffer made on a table (by their names; not SQLite's automatic ones nor those
  /// someone else created under other names), in name order.
  static func indexes(of table: String, on connection: SQLiteConnection) throws -> [SQLiteIndex] {
    let statement = try connection.statement(
      #"SELECT l.name, l."unique", l.partial, i.name FROM pragma_index_list(?1) AS l, "#
        + "pragma_index_info(l.name) AS i WHERE l.origin = 'c' ORDER BY l.name, i.seqno")
    var rows: [(name: String, isUnique: Bool, isPartial: Bool, column: String?)] = []
    try statement.withBindings([.string(table)]) {
      while try statement.stepReading() {
        let name = statement.string(at: 0)
        guard isCofferName(name) else { continue }
        rows.append((name, statement.int(at: 1) == 1, statement.int(at: 2) == 1, statement.text(at: 3)))
      }
    }
    var indexes: [SQLiteIndex] = []
    var expressions: [Bool] = []
    for row in rows {
      if let last = indexes.last, last.name.utf8.elementsEqual(row.name.utf8) {
        indexes[indexes.count - 1].columns.append(row.column ?? "")
        expressions[expressions.count - 1] = expressions[expressions.count - 1] || row.column == nil
      } else {
        indexes.append(
          SQLiteIndex(
            name: row.name, isUnique: row.isUnique, isPartial: row.isPartial, columns: [row.column ?? ""]))
        expressions.append(row.column == nil)
      }
    }
    // An expression in an index has no column name: such an index holds no declared index.
    for position in indexes.indices where expressions[position] { indexes[position].columns = [] }
    return indexes
  }

  /// One index a schema declares, as its table's columns name it.
  struct Wanted {
    /// The declared index.
    var index: Index
    /// The columns it covers (unquoted), in order.
    var columns: [String]
    /// The name Coffer gives the index when it creates it: `TABLE/index/COLUMNS` or
    /// `TABLE/unique/COLUMNS`.
    var usualName: String
  }

  /// The indexes a schema declares, for a table named `tableName` with `columns` (the column of
  /// each field, in field order); an index declared twice is listed once. A text index is none
  /// of them: it is an FTS5 table (``SQLiteTextIndex``).
  static func wanted(by schema: EntitySchema, tableName: String, columns: [String]) -> [Wanted] {
    var wanted: [Wanted] = []
    for index in schema.orderedIndexes {
      let covered = index.fields.compactMap { schema.position(of: $0) }.map { columns[$0] }
      let folded = covered.map(SQLiteIdentifier.folded)
      if wanted.contains(where: {
        $0.index.isUnique == index.isUnique && $0.columns.map(SQLiteIdentifier.folded) == folded
      }) {
        continue
      }
      let usualName = tableName + (index.isUnique ? "/unique/" : "/index/") + covered.joined(separator: ",")
      wanted.append(Wanted(index: index, columns: covered, usualName: usualName))
    }
    return wanted
  }

  /// How a table's indexes stand against those its schema declares.
  struct Match {
    /// Each declared index, with the index that holds it (`nil` when none does).
    var declared: [(wanted: Wanted, index: SQLiteIndex?)]
    /// Coffer's indexes on the table that hold no declared index.
    var undeclared: [SQLiteIndex]
  }

  /// Pairs each declared index with an index that holds it, preferring the one under its usual
  /// name; each index holds at most one declared index.
  static func match(_ wanted: [Wanted], with existing: [SQLiteIndex]) -> Match {
    var unclaimed = existing
    var declared: [(wanted: Wanted, index: SQLiteIndex?)] = []
    for entry in wanted {
      let found =
        unclaimed.firstIndex { $0.name == entry.usualName && $0.holds(entry) }
        ?? unclaimed.firstIndex { $0.holds(entry) }
      declared.append((entry, found.map { unclaimed.remove(at: $0) }))
    }
    return Match(declared: declared, undeclared: unclaimed)
  }
}
