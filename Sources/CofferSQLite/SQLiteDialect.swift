@_spi(Backend) import Coffer
import CofferSQL
import Foundation

/// SQLite's spelling of the statements ``CofferSQL/SQLStatement`` builds: numbered `?n`
/// placeholders over an array of values, `1`/`0` for truth, SQLite's own NULL order (first
/// ascending, last descending), and:
///
/// - substring tests compare UTF-8 bytes (`instr`/`substr` on the column cast to a BLOB, the
///   pattern bound as a BLOB), so they are case-sensitive and `%`, `_`, `*` are ordinary;
///   ignoring case, both sides are folded by the connection's own function (never SQLite's
///   `lower()`, which an ICU build changes): see `SQLiteConnection.foldASCII`;
/// - strings compare with SQLite's BINARY collation (byte order, which is code-point order);
/// - SQLite's parser holds only so many open parentheses, so and/or/not nested deeper than
///   ``inlineDepth`` go into common table expressions;
/// - `min`/`max` and `sum` are SQLite's own: strings in BINARY order, blobs (UUIDs included) by
///   memcmp, dates and bools as the integers they are stored as; `sum` of integers is exact or
///   fails with "integer overflow", which the backend answers with the core's evaluator.
package enum SQLiteDialect: SQLDialect {
  package typealias Bindings = [Value]

  package static func placeholder(_ number: Int) -> String { "?\(number)" }

  package static let alwaysTrue = "1"
  package static let alwaysFalse = "0"

  /// The most levels of and/or/not written inline, well within SQLite's parser stack.
  package static let inlineDepth = 12

  package static func orderKey(_ column: String, ascending: Bool) -> String {
    ascending ? "\(column) ASC" : "\(column) DESC"
  }

  package static func membership(
    _ column: String, _ values: [Value], _ kind: FieldKind, into statement: inout SQLiteQuery
  ) -> String {
    var list = ""
    for (index, value) in values.enumerated() {
      if index > 0 { list += ", " }
      list += statement.bind(value, kind)
    }
    return "\(column) IN (\(list))"
  }

  /// On a field with a text index (``SQLiteTextIndex``), a query FTS5 can say is a lookup in
  /// the index; any other is Coffer's match function on each row's text.
  package static func textMatch(
    _ field: String, of table: SQLTableLayout, _ query: String, into statement: inout SQLiteQuery
  ) throws -> String {
    if let index = SQLiteTextIndex.name(for: field, in: table), let parsed = try? TextQuery(parsing: query),
      let exact = SQLiteTextQuery.exact(parsed)
    {
      let fts = SQLIdentifier.quoted(index)
      let expression = statement.bind(.string(exact.expression), .string)
      return "\(table.idColumn) IN (SELECT rowid FROM \(fts) WHERE \(fts) MATCH \(expression))"
    }
    let column = try table.column(field)
    return
      "\(SQLiteConnection.textMatchFunction)(CAST(\(column) AS BLOB), \(statement.bind(.string(query), .string)))"
  }

  package static func stringTest(
    _ column: String, _ match: StringMatch, _ pattern: String, into statement: inout SQLiteQuery
  ) -> String {
    let text =
      match.ignoresCase
      ? "\(SQLiteConnection.foldFunction)(CAST(\(column) AS BLOB))" : "CAST(\(column) AS BLOB)"
    let folded = match.ignoresCase ? StringMatch.foldingASCIICase(pattern) : pattern
    let bytes = Value.bytes(Data(folded.utf8))
    let length = Value.int(Int64(folded.utf8.count))
    switch match {
    case .contains, .containsIgnoringCase:
      return "instr(\(text), \(statement.bind(bytes, .bytes))) > 0"
    case .hasPrefix, .hasPrefixIgnoringCase:
      let count = statement.bind(length, .int)
      return "substr(\(text), 1, \(count)) = \(statement.bind(bytes, .bytes))"
    case .hasSuffix, .hasSuffixIgnoringCase:
      let count = statement.bind(length, .int)
      return "substr(\(text), -\(count)) = \(statement.bind(bytes, .bytes))"
    case .equalIgnoringCase:
      return "\(text) = \(statement.bind(bytes, .bytes))"
    }
  }

  /// `LIMIT ? OFFSET ?` whenever there is anything to cut, a limit of -1 keeping every row: one
  /// statement for every page.
  package static func appendSlice(limit: Int?, offset: Int, to statement: inout SQLiteQuery) {
    guard limit != nil || offset > 0 else { return }
    let most = statement.bind(.int(Int64(limit ?? -1)), .int)
    let skipped = statement.bind(.int(Int64(offset)), .int)
    statement.sql += " LIMIT \(most) OFFSET \(skipped)"
  }

  package static func comparedName(_ name: String) -> String { SQLiteIdentifier.folded(name) }

  package static func columnType(_ kind: FieldKind) -> String { SQLiteTable.columnType(kind) }

  package static func freshName(for wanted: String, avoiding taken: Set<String>) -> String {
    SQLiteIdentifier.fresh(for: wanted, avoiding: taken)
  }

  package static func extreme(_ column: String, _ kind: FieldKind, smallest: Bool) -> String {
    smallest ? "min(\(column))" : "max(\(column))"
  }

  package static func integerSum(_ column: String) -> String { "sum(\(column))" }

  /// SQLite's `sum`, which the backend finishes with the count, minimum and maximum since it
  /// turns the NaN of `+inf + -inf` into NULL.
  package static func doubleSum(_ column: String, exact: Bool) -> String { "sum(\(column))" }
}

/// A statement in SQLite's dialect.
package typealias SQLiteQuery = SQLStatement<SQLiteDialect>

extension Array: SQLBindings where Element == Value {
  /// Appends a value; SQLite binds by the value's own kind.
  package mutating func append(_ value: Value, as kind: FieldKind) { append(value) }
}
