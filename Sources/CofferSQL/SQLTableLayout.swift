@_spi(Backend) import Coffer

/// How one prepared entity is laid out in an SQL table: its schema, the table's and columns'
/// names, plain and quoted, and the field kinds — what every statement on the table names.
///
/// A class: the backends' tables hold one and the hot paths pass it around, where a copy of
/// this many strings would cost a dozen retains.
package final class SQLTableLayout: Sendable {
  /// The schema the entity was prepared with.
  package let schema: EntitySchema
  /// The table's name (unquoted).
  package let tableName: String
  /// The quoted table, qualified as the engine needs it: `"Message"`, `"public"."Message"`.
  package let table: String
  /// The column of each field (unquoted), in field order.
  package let columnNames: [String]
  /// The quoted column of each field, in field order.
  package let columns: [String]
  /// The field kinds, in field order.
  package let kinds: [FieldKind]
  /// The quoted id column.
  package let idColumn: String
  /// Every column, quoted, in field order: `"id", "name", …`.
  package let selectList: String

  /// The layout of `schema` in the table `table` (quoted) named `tableName`, whose columns
  /// are `columnNames` in field order.
  package init(schema: EntitySchema, tableName: String, table: String, columnNames: [String]) {
    self.schema = schema
    self.tableName = tableName
    self.table = table
    self.columnNames = columnNames
    let columns = columnNames.map(SQLIdentifier.quoted)
    self.columns = columns
    self.kinds = schema.fields.map(\.kind)
    self.idColumn = columns[schema.idPosition]
    self.selectList = columns.joined(separator: ", ")
  }

  /// The quoted column of a field.
  package func column(_ field: String) throws -> String { try self.field(field).column }

  /// The quoted column and kind of a field, or the error naming the fields there are.
  package func field(_ name: String) throws -> (column: String, kind: FieldKind) {
    guard let position = schema.position(of: name) else {
      let known = schema.fields.map(\.name).joined(separator: ", ")
      throw CofferError(
        .invalidQuery, "\(schema.name) has no field '\(name)'. Its fields are: \(known).",
        entity: schema.name, field: name)
    }
    return (columns[position], kinds[position])
  }
}

/// A backend's table of one entity: its ``SQLTableLayout`` and whatever the backend keeps
/// beside it (compiled statements, serials). The layout's names read as the table's own.
package protocol SQLEntityTable: AnyObject, Sendable {
  /// The table's layout.
  var layout: SQLTableLayout { get }
}

extension SQLEntityTable {
  /// The schema the entity was prepared with.
  @inlinable package var schema: EntitySchema { layout.schema }
  /// The table's name (unquoted).
  @inlinable package var tableName: String { layout.tableName }
  /// The quoted (and qualified) table.
  @inlinable package var table: String { layout.table }
  /// The column of each field (unquoted), in field order.
  @inlinable package var columnNames: [String] { layout.columnNames }
  /// The quoted column of each field, in field order.
  @inlinable package var columns: [String] { layout.columns }
  /// The field kinds, in field order.
  @inlinable package var kinds: [FieldKind] { layout.kinds }
  /// The quoted id column.
  @inlinable package var idColumn: String { layout.idColumn }
  /// Every column, quoted, in field order.
  @inlinable package var selectList: String { layout.selectList }

  /// The quoted column of a field.
  @inlinable package func column(_ field: String) throws -> String { try layout.column(field) }

  /// The quoted column and kind of a field.
  @inlinable package func field(_ name: String) throws -> (column: String, kind: FieldKind) {
    try layout.field(name)
  }
}

extension SQLEntityTable {
  /// Throws unless a row has one value per column, as a row in the entity's stored schema has.
  package func checkWidth(of row: Row, into entity: String, store: String) throws {
    guard row.count == kinds.count else {
      throw CofferError(
        .invalidValue,
        "A row of \(row.count) values cannot go into \(entity), which stores \(kinds.count) fields. Make "
          + "the row in the entity's stored schema.",
        store: store, entity: entity)
    }
  }
}

extension CofferError {
  /// The error for an entity that was never prepared in a store; `inBatch` adds that nothing
  /// of the batch was applied.
  package static func neverPrepared(_ entity: String, store: String, inBatch: Bool) -> CofferError {
    CofferError(
      .unknownEntity,
      "Entity '\(entity)' was never prepared in this store. Prepare it first (Store does this for you)."
        + (inBatch ? " Nothing in the batch was applied." : ""),
      store: store, entity: entity)
  }
}
