@_spi(Backend) import Coffer
import CofferSQL

/// One prepared entity: its schema, the table and columns that hold it, and the SQL of the
/// operations that do not depend on a query (compiled once per connection and reused).
///
/// A class: the hot paths pass the table around per row, and a reference costs one retain
/// where a copy of this many strings would cost a dozen.
package final class SQLiteTable: SQLEntityTable {
  /// The statements every table has, which connections cache by ``serial`` and operation
  /// (an integer key: no SQL text is hashed on the hot paths).
  enum Operation: Int, CaseIterable {
    case get, insert, update, delete, exists, indexedValues
  }

  /// A number that no other table of the same backend has, given when the table is published.
  let serial: Int
  /// The schema, names and kinds every statement on the table uses.
  package let layout: SQLTableLayout
  /// The insert, update, get and delete of one row by id.
  let byID: SQLRowStatements
  let existsSQL: String
  /// The positions of the fields other than the id that an index covers, in field order (at
  /// most 64 of them; empty for a table with more, which updates every column).
  let indexedPositions: [Int]
  /// `SELECT` of the ``indexedPositions``' columns of the row with an id (`?1`).
  let indexedValuesSQL: String

  init(schema: EntitySchema, tableName: String, columnNames: [String], serial: Int = 0) {
    self.serial = serial
    let layout = SQLTableLayout(
      schema: schema, tableName: tableName, table: SQLIdentifier.quoted(tableName), columnNames: columnNames)
    self.layout = layout
    let (table, columns, id) = (layout.table, layout.columns, layout.idColumn)
    byID = SQLRowStatements(layout, in: SQLiteDialect.self)
    existsSQL = "SELECT count(*) FROM \(table) WHERE \(id) = ?1"
    let indexed = Set(schema.orderedIndexes.flatMap(\.fields).compactMap { schema.position(of: $0) })
      .subtracting([schema.idPosition]).sorted()
    indexedPositions = indexed.count <= 64 ? indexed : []
    indexedValuesSQL =
      "SELECT \(indexedPositions.map { columns[$0] }.joined(separator: ", ")) FROM \(table) WHERE \(id) = ?1"
  }

  /// An update that leaves out the indexed columns whose bit in `unchanged` is set (bit `k`
  /// for ``indexedPositions``[k]), so that SQLite leaves those index entries alone: its SQL,
  /// and the row positions whose values it takes as `?1`, `?2`, … in that order. `nil` when it
  /// would set no column at all.
  func partialUpdate(keeping unchanged: UInt64) -> (sql: String, positions: [Int])? {
    var skipped = Set<Int>()
    for (bit, position) in indexedPositions.enumerated() where unchanged & (1 << UInt64(bit)) != 0 {
      skipped.insert(position)
    }
    let set = columns.indices.filter { $0 != schema.idPosition && !skipped.contains($0) }
    guard !set.isEmpty else { return nil }
    let assignments = set.enumerated().map { "\(columns[$1]) = ?\($0 + 1)" }
    return (
      "UPDATE \(table) SET \(assignments.joined(separator: ", ")) WHERE \(columns[schema.idPosition]) = ?\(set.count + 1)",
      set + [schema.idPosition]
    )
  }

  /// The same table with the serial it is published under.
  func numbered(_ serial: Int) -> SQLiteTable {
    SQLiteTable(schema: schema, tableName: tableName, columnNames: columnNames, serial: serial)
  }

  /// The SQL of an operation.
  func sql(_ operation: Operation) -> String {
    switch operation {
    case .get: byID.get
    case .insert: byID.insert
    case .update: byID.update
    case .delete: byID.delete
    case .exists: existsSQL
    case .indexedValues: indexedValuesSQL
    }
  }

  /// The SQL type a field's column is declared with (the table is `STRICT`).
  static func columnType(_ kind: FieldKind) -> String {
    switch kind {
    case .bool, .int, .date: "INTEGER"
    // ANY keeps a double exactly as bound; a REAL column would store -0.0 as the integer 0.
    case .double: "ANY"
    case .string, .document: "TEXT"
    case .bytes, .uuid: "BLOB"
    }
  }
}
