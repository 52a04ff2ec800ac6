@_spi(Backend) import Coffer
import CofferSQL

/// A text index (``Coffer/Index/text(on:)``) on SQLite: an FTS5 table of Coffer's own words.
///
/// SQLite's tokenizers fold and split words otherwise than ``TextTokenizer`` does, so Coffer
/// tokenizes: the FTS5 table is contentless (`content=''`) and holds, for each row whose field
/// is not null, the row's words joined by single spaces, under the row's rowid. It uses FTS5's
/// `ascii` tokenizer, which splits only at ASCII characters other than letters and digits and
/// folds only `A`–`Z`; a Coffer word holds none of those (its ASCII is `a`–`z` and `0`–`9`),
/// so FTS5 sees exactly Coffer's words. Triggers on the entity's table keep the index in step
/// in the same transaction as the rows, whoever writes them, through the connection's
/// `coffer_text_words` function. Ranking is Coffer's BM25, computed by the core from the
/// counts an auxiliary function (`coffer_text_collect`) gathers.
///
/// Only an entity whose id is an Int64 (a rowid table) has one; another's searches read the
/// rows. The index is named `TABLE/text/COLUMN`, and its triggers that name followed by
/// `/insert`, `/delete` and `/update`. A relabel that renames the table or the column leaves a
/// name that no longer fits, and the index is rebuilt under the new one. The catalog, the
/// change feed, export and copy never see the table: they carry the index's definition.
enum SQLiteTextIndex {
  /// The name of the SQL function that gives a text's words joined by spaces.
  static let wordsFunction = "coffer_text_words"
  /// The name of the FTS5 auxiliary function that gathers a search's counts.
  static let collectFunction = "coffer_text_collect"

  /// The FTS5 table for `column` of `table`, or `nil` when the table has none (its id is not an
  /// Int64, or the field has no text index).
  static func name(for field: String, in layout: SQLTableLayout) -> String? {
    guard layout.schema.idField.kind == .int, layout.schema.textIndexedFields.contains(field),
      let position = layout.schema.position(of: field)
    else { return nil }
    return name(table: layout.tableName, column: layout.columnNames[position])
  }

  static func name(table: String, column: String) -> String { table + "/text/" + column }

  /// Makes the table's text indexes those its schema declares (when `creating` accepts a text
  /// index): drops Coffer's FTS5 tables on the table under names that no longer fit, creates
  /// and fills the missing ones.
  static func sync(_ table: SQLiteTable, on connection: SQLiteConnection, creating: Bool) throws {
    let wanted = Set(table.schema.textIndexedFields.compactMap { name(for: $0, in: table.layout) })
    let existing = try names(on: table.tableName, connection)
    for stale in existing where !wanted.contains(stale) { try drop(stale, on: connection) }
    guard creating else { return }
    for field in table.schema.textIndexedFields {
      guard let index = name(for: field, in: table.layout), !existing.contains(index),
        let position = table.schema.position(of: field)
      else { continue }
      try create(
        index, table: table.table, column: SQLIdentifier.quoted(table.columnNames[position]), connection)
    }
  }

  /// Drops every text index of a table (before the table is dropped).
  static func dropAll(on tableName: String, _ connection: SQLiteConnection) throws {
    for index in try names(on: tableName, connection) { try drop(index, on: connection) }
  }

  /// The names of the text indexes on a table: those of its `…/text/…/insert` triggers.
  private static func names(on tableName: String, _ connection: SQLiteConnection) throws -> Set<String> {
    let statement = try connection.statement(
      "SELECT name FROM sqlite_schema WHERE type = 'trigger' AND tbl_name = ?1")
    var found: Set<String> = []
    try statement.withBindings([.string(tableName)]) {
      while try statement.stepReading() {
        let trigger = statement.string(at: 0)
        guard trigger.contains("/text/"), trigger.hasSuffix("/insert") else { continue }
        found.insert(String(trigger.dropLast("/insert".count)))
      }
    }
    return found
  }

  private static func drop(_ index: String, on connection: SQLiteConnection) throws {
    for suffix in ["/insert", "/delete", "/update"] {
      try connection.execute("DROP TRIGGER IF EXISTS \(SQLIdentifier.quoted(index + suffix))")
    }
    try connection.execute("DROP TABLE IF EXISTS \(SQLIdentifier.quoted(index))")
  }

  private static func create(_ index: String, table: String, column: String, _ connection: SQLiteConnection)
    throws
  {
    let fts = SQLIdentifier.quoted(index)
    func words(_ value: String) -> String { "\(wordsFunction)(CAST(\(value) AS BLOB))" }
    try connection.execute("CREATE VIRTUAL TABLE \(fts) USING fts5(words, content = '', tokenize = 'ascii')")
    try connection.execute(
      "INSERT INTO \(fts) (rowid, words) SELECT rowid, \(words(column)) FROM \(table) WHERE \(column) IS NOT NULL"
    )
    let insert =
      "INSERT INTO \(fts) (rowid, words) SELECT new.rowid, \(words("new.\(column)")) "
      + "WHERE new.\(column) IS NOT NULL;"
    let delete =
      "INSERT INTO \(fts) (\(fts), rowid, words) SELECT 'delete', old.rowid, \(words("old.\(column)")) "
      + "WHERE old.\(column) IS NOT NULL;"
    try connection.execute(
      "CREATE TRIGGER \(SQLIdentifier.quoted(index + "/insert")) AFTER INSERT ON \(table) BEGIN \(insert) END"
    )
    try connection.execute(
      "CREATE TRIGGER \(SQLIdentifier.quoted(index + "/delete")) AFTER DELETE ON \(table) BEGIN \(delete) END"
    )
    try connection.execute(
      "CREATE TRIGGER \(SQLIdentifier.quoted(index + "/update")) AFTER UPDATE OF \(column) ON \(table) "
        + "WHEN old.\(column) IS NOT new.\(column) BEGIN \(delete) \(insert) END")
  }
}
