@_spi(Backend) import Coffer

extension SQLDialect {
  /// The columns of a new table for a schema's fields, in field order — each field's name where
  /// the engine can take it, else a fresh name made from it — and their definitions for
  /// `CREATE TABLE`: `"column" TYPE`, the id's followed by `idConstraint`.
  package static func newColumns(for schema: EntitySchema, idConstraint: String)
    -> (names: [String], definitions: [String])
  {
    var taken: Set<String> = []
    var names: [String] = []
    var definitions: [String] = []
    for (position, field) in schema.fields.enumerated() {
      let column = freshName(for: field.name, avoiding: taken)
      taken.insert(comparedName(column))
      names.append(column)
      let constraint = position == schema.idPosition ? idConstraint : ""
      definitions.append("\(SQLIdentifier.quoted(column)) \(columnType(field.kind))\(constraint)")
    }
    return (names, definitions)
  }

  /// `INSERT INTO table (columns) VALUES (…)`, binding the row's values in field order.
  package static func insertRow(_ table: SQLTableLayout) -> String {
    let placeholders = (1...table.columns.count).map(placeholder).joined(separator: ", ")
    return "INSERT INTO \(table.table) (\(table.selectList)) VALUES (\(placeholders))"
  }

  /// `UPDATE table SET column = … WHERE id = …`, binding the row's values in field order: every
  /// column but the id is set (an entity with only an id sets the id to itself, so that the
  /// update just finds the row).
  package static func updateRow(_ table: SQLTableLayout) -> String {
    let id = table.idColumn
    let assignments = table.columns.indices.filter { $0 != table.schema.idPosition }.map {
      "\(table.columns[$0]) = \(placeholder($0 + 1))"
    }
    return "UPDATE \(table.table) SET "
      + (assignments.isEmpty ? "\(id) = \(id)" : assignments.joined(separator: ", "))
      + " WHERE \(id) = \(placeholder(table.schema.idPosition + 1))"
  }

  /// `SELECT columns FROM table WHERE id = …`, binding the id.
  package static func selectRow(_ table: SQLTableLayout) -> String {
    "SELECT \(table.selectList) FROM \(table.table) WHERE \(table.idColumn) = \(placeholder(1))"
  }

  /// `DELETE FROM table WHERE id = …`, binding the id.
  package static func deleteRow(_ table: SQLTableLayout) -> String {
    "DELETE FROM \(table.table) WHERE \(table.idColumn) = \(placeholder(1))"
  }
}

/// The statements on one row by id that every SQL table has, written once per table in one
/// engine's dialect.
package struct SQLRowStatements: Sendable {
  /// `INSERT INTO table (columns) VALUES (…)`, binding the row's values in field order.
  package let insert: String
  /// `UPDATE table SET … WHERE id = …`, binding the row's values in field order.
  package let update: String
  /// `SELECT columns FROM table WHERE id = …`, binding the id.
  package let get: String
  /// `DELETE FROM table WHERE id = …`, binding the id.
  package let delete: String

  /// The statements on `table`; the update and the delete end with `returning` (a `RETURNING`
  /// clause for an engine that counts changed rows that way).
  package init<Dialect: SQLDialect>(_ table: SQLTableLayout, in dialect: Dialect.Type, returning: String = "")
  {
    insert = Dialect.insertRow(table)
    update = Dialect.updateRow(table) + returning
    get = Dialect.selectRow(table)
    delete = Dialect.deleteRow(table) + returning
  }
}
