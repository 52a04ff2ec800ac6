@_spi(Backend) import Coffer
import CofferSQL
import Foundation

/// One prepared entity: its schema, the table and columns that hold it, and the SQL of the
/// operations that do not depend on a query, written once.
package final class PostgresTable: SQLEntityTable {
  /// The schema, names and kinds every statement on the table uses.
  package let layout: SQLTableLayout
  /// The insert, update, get and delete of one row by id (the update and delete answer a row
  /// per row changed).
  let byID: SQLRowStatements
  let getManySQL: String
  let upsertSQL: String
  let existsSQL: String
  /// `INSERT … SELECT * FROM unnest($1::bigint[], …)`: many rows in one statement.
  let insertManySQL: String
  /// `UPDATE … FROM unnest(…)`: many rows (of distinct ids) in one statement, answering how
  /// many it updated (one row, not one per row updated).
  let updateManySQL: String
  /// The ids of `$1` (an array) that are stored: which row of a run found nothing to update.
  let storedIDsSQL: String
  /// `INSERT … SELECT * FROM unnest(…) ON CONFLICT (id) DO UPDATE …`: many upserts (of distinct ids).
  let upsertManySQL: String
  /// For an entity with unique indexes, bound as ``updateManySQL`` is: answers 1 when a stored
  /// row of the run's ids holds, under a unique index, the values another row of the run takes,
  /// and 0 otherwise (see ``UniqueRun``). `nil` without unique indexes.
  let uniqueClashSQL: String?
  /// ``updateManySQL`` that changes no row when ``uniqueClashSQL`` answers 1: the check and the
  /// update in one statement (both read the snapshot the statement began with). `nil` without
  /// unique indexes.
  let updateManyUnlessClashSQL: String?
  /// `DELETE … WHERE id = ANY($1)`, answering the number of rows it deleted (one row, not one
  /// per row deleted).
  let deleteManySQL: String
  /// ``deleteManySQL`` answering the id of each row deleted, for the change feed.
  let deleteManyReturningSQL: String
  /// ``upsertManySQL`` answering each row's id with whether it was inserted, for the change feed.
  let upsertManyReturningSQL: String
  /// The update by id that changes the row only while every other column still holds the values
  /// bound after the new row's.
  let updateIfUnchangedSQL: String
  /// `DELETE … WHERE id = $1 AND` every other column still holds the values bound after it.
  let deleteIfUnchangedSQL: String
  /// ``updateManySQL`` that applies only while every row read, locked first, still holds what
  /// was read (`PostgresApplier+RowLocks.swift`).
  let updateManyIfUnchangedSQL: String
  /// ``updateManyIfUnchangedSQL`` for 1, 2, … ``fewRows`` rows, each value bound by itself.
  let updateFewIfUnchangedSQL: [String]

  /// Whether a query read in `layout` wants the ids alone: its layout is the id field alone, as
  /// stored. ``select(_:)`` then selects the id column alone, and the rows it
  /// reads are rows of that one value.
  func readsIDsOnly(_ layout: EntitySchema?) -> Bool {
    guard let layout, layout.fields.count == 1 else { return false }
    return layout.idField.name == schema.idField.name && layout.idField.kind == schema.idField.kind
  }

  /// The `SELECT` of a query (see ``CofferSQL/SQLStatement/select(_:in:list:)``): the id column
  /// alone for a query read in the id field alone.
  func select(_ query: Query) throws -> PostgresSQL {
    try PostgresSQL.select(query, in: layout, list: readsIDsOnly(query.layout) ? idColumn : nil)
  }

  /// The kinds of the columns a query read in `layout` selects.
  func selectedKinds(_ layout: EntitySchema?) -> [FieldKind] {
    readsIDsOnly(layout) ? [kinds[schema.idPosition]] : kinds
  }

  init(schema: EntitySchema, namespace: String, tableName: String, columnNames: [String]) {
    let table = SQLIdentifier.quoted(namespace) + "." + SQLIdentifier.quoted(tableName)
    let layout = SQLTableLayout(schema: schema, tableName: tableName, table: table, columnNames: columnNames)
    self.layout = layout
    let (columns, kinds, selectList, id) = (layout.columns, layout.kinds, layout.selectList, layout.idColumn)
    let placeholders = (1...columns.count).map { "$\($0)" }.joined(separator: ", ")
    byID = SQLRowStatements(layout, in: PostgresDialect.self, returning: " RETURNING 1")
    getManySQL = "SELECT \(selectList) FROM \(table) WHERE \(id) = ANY($1) ORDER BY \(id)"
    let others = columns.indices.filter { $0 != schema.idPosition }
    let updateByID = PostgresDialect.updateRow(layout)
    let excluded = others.map { "\(columns[$0]) = EXCLUDED.\(columns[$0])" }
    upsertSQL =
      "INSERT INTO \(table) (\(selectList)) VALUES (\(placeholders)) ON CONFLICT (\(id)) DO "
      + (excluded.isEmpty ? "NOTHING" : "UPDATE SET \(excluded.joined(separator: ", "))")
      // A row the statement inserted has no deleting transaction yet: xmax is 0.
      + " RETURNING (xmax = 0)"
    existsSQL = "SELECT 1 FROM \(table) WHERE \(id) = $1"
    let arrays = kinds.enumerated().map { "$\($0.offset + 1)::\(PostgresValues.arrayCast($0.element))" }
    let unnest = "unnest(\(arrays.joined(separator: ", ")))"
    insertManySQL = "INSERT INTO \(table) (\(selectList)) \(Self.selectAll(unnest))"
    // The rows' columns are named by position: "0", "1", …
    let names = columns.indices.map { "\"\($0)\"" }
    let fromRows = "\(unnest) AS \"rows\"(\(names.joined(separator: ", ")))"
    let setFromRows = others.map { "\(columns[$0]) = \"rows\".\(names[$0])" }
    let setList = setFromRows.isEmpty ? "\(id) = \(table).\(id)" : setFromRows.joined(separator: ", ")
    let matchesRow = "\(table).\(id) = \"rows\".\(names[schema.idPosition])"
    updateManySQL =
      "WITH \"updated\" AS (UPDATE \(table) SET \(setList) FROM \(fromRows) WHERE \(matchesRow) RETURNING 1) "
      + "SELECT count(*) FROM \"updated\""
    storedIDsSQL =
      "SELECT \(id) FROM \(table) WHERE \(id) = ANY($1::\(PostgresValues.arrayCast(kinds[schema.idPosition])))"
    upsertManySQL =
      "INSERT INTO \(table) (\(selectList)) \(Self.selectAll(unnest)) ON CONFLICT (\(id)) DO "
      + (excluded.isEmpty ? "NOTHING" : "UPDATE SET \(excluded.joined(separator: ", "))")
      + " RETURNING (xmax = 0)"
    let idArray = "$\(schema.idPosition + 1)::\(PostgresValues.arrayCast(kinds[schema.idPosition]))"
    let clashes = schema.uniqueIndexes.map { index in
      let matches = index.fields.compactMap(schema.position(of:)).map {
        "\(table).\(columns[$0]) = \"rows\".\(names[$0])"
      }
      return "(SELECT 1 FROM \(table) JOIN \(fromRows) ON \(matches.joined(separator: " AND ")) "
        + "WHERE \(table).\(id) = ANY(\(idArray)) AND \(table).\(id) <> \"rows\".\(names[schema.idPosition]) LIMIT 1)"
    }
    let anyClash = clashes.joined(separator: " UNION ALL ")
    uniqueClashSQL = clashes.isEmpty ? nil : "SELECT count(*) FROM (\(anyClash)) AS \"clash\""
    updateManyUnlessClashSQL =
      clashes.isEmpty
      ? nil
      : "WITH \"clash\" AS (SELECT count(*) AS \"n\" FROM (\(anyClash)) AS \"c\"), "
        + "\"updated\" AS (UPDATE \(table) SET \(setList) FROM \(fromRows), \"clash\" WHERE \(matchesRow) "
        + "AND \"clash\".\"n\" = 0 RETURNING 1) SELECT count(*) FROM \"updated\""
    deleteManySQL =
      "WITH deleted AS (DELETE FROM \(table) WHERE \(id) = ANY($1::\(PostgresValues.arrayCast(kinds[schema.idPosition]))) "
      + "RETURNING 1) SELECT count(*) FROM deleted"
    deleteManyReturningSQL =
      "DELETE FROM \(table) WHERE \(id) = ANY($1::\(PostgresValues.arrayCast(kinds[schema.idPosition]))) "
      + "RETURNING \(id)"
    upsertManyReturningSQL =
      "INSERT INTO \(table) (\(selectList)) \(Self.selectAll(unnest)) ON CONFLICT (\(id)) DO "
      + (excluded.isEmpty ? "NOTHING" : "UPDATE SET \(excluded.joined(separator: ", "))")
      + " RETURNING \(id), (xmax = 0)"
    let unchangedAfterRow = Self.unchangedCondition(
      columns, kinds, skipping: schema.idPosition, after: columns.count)
    updateIfUnchangedSQL =
      updateByID + (unchangedAfterRow.isEmpty ? "" : " AND \(unchangedAfterRow)")
      + " RETURNING 1"
    let unchangedAfterID = Self.unchangedCondition(columns, kinds, skipping: schema.idPosition, after: 1)
    deleteIfUnchangedSQL =
      PostgresDialect.deleteRow(layout) + (unchangedAfterID.isEmpty ? "" : " AND \(unchangedAfterID)")
      + " RETURNING 1"
    updateManyIfUnchangedSQL = Self.updateManyIfUnchangedSQL(table, columns, kinds, id: schema.idPosition)
    updateFewIfUnchangedSQL = (1...Self.fewRows).map {
      Self.updateManyIfUnchangedSQL(table, columns, kinds, id: schema.idPosition, rows: $0)
    }
  }

  /// `column IS NOT DISTINCT FROM $n AND …` for every column but `skipping`, in field order,
  /// bound from `$(after + 1)` on. Doubles compare bit for bit, as a precondition does, so that
  /// `-0.0` differs from `0.0`.
  private static func unchangedCondition(_ columns: [String], _ kinds: [FieldKind], skipping: Int, after: Int)
    -> String
  {
    var terms: [String] = []
    var parameter = after
    for index in columns.indices where index != skipping {
      parameter += 1
      terms.append(
        kinds[index] == .double
          ? "float8send(\(columns[index])) IS NOT DISTINCT FROM float8send($\(parameter)::double precision)"
          : "\(columns[index]) IS NOT DISTINCT FROM $\(parameter)")
    }
    return terms.joined(separator: " AND ")
  }

  /// `SELECT * FROM source`.
  private static func selectAll(_ source: String) -> String { "SELECT * FROM \(source)" }
}

/// PostgreSQL identifiers that fit its 63-byte limit.
enum PostgresIdentifier {
  /// The most bytes PostgreSQL keeps of an identifier.
  static let maximumBytes = 63

  /// A name for `wanted` that is not in `taken` and fits in 63 bytes: the name itself when it
  /// can be, else a shortened one with a number.
  static func fresh(for wanted: String, avoiding taken: Set<String>) -> String {
    let base = fitting(wanted, reserve: 0)
    if !base.isEmpty, !taken.contains(base), !base.contains("\u{0}") { return base }
    var number = 2
    while true {
      let suffix = "_\(number)"
      let candidate =
        fitting(wanted.replacingOccurrences(of: "\u{0}", with: ""), reserve: suffix.utf8.count) + suffix
      if !taken.contains(candidate) { return candidate }
      number += 1
    }
  }

  /// The longest prefix of `name` (whole characters) that leaves `reserve` bytes of the 63.
  private static func fitting(_ name: String, reserve: Int) -> String {
    var result = ""
    var bytes = 0
    for character in name {
      let size = String(character).utf8.count
      if bytes + size > maximumBytes - reserve { break }
      result.append(character)
      bytes += size
    }
    return result
  }
}
