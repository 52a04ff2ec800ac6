import CSQLite
import Coffer
import Foundation

/// The current row of a statement, read column by column in place: a value is built straight
/// from `sqlite3_column_*`, with no ``Coffer/Row`` in between. Valid until the statement steps.
struct SQLiteFields: StoredFields {
  let statement: SQLiteStatement
  /// The field kinds, in column order.
  let kinds: [FieldKind]

  var count: Int { kinds.count }

  func value(at position: Int) throws -> Value { try statement.value(at: Int32(position), kinds[position]) }

  func isNull(at position: Int) -> Bool {
    position < kinds.count && sqlite3_column_type(statement.handle, Int32(position)) == SQLITE_NULL
  }

  /// Whether the column holds a non-null value of a field of `kind`.
  private func holds(_ kind: FieldKind, at position: Int) -> Bool {
    position < kinds.count && kinds[position] == kind
      && sqlite3_column_type(statement.handle, Int32(position)) != SQLITE_NULL
  }

  func int(at position: Int) -> Int64? {
    holds(.int, at: position) ? statement.int(at: Int32(position)) : nil
  }

  func double(at position: Int) -> Double? {
    holds(.double, at: position) ? sqlite3_column_double(statement.handle, Int32(position)) : nil
  }

  func bool(at position: Int) -> Bool? {
    holds(.bool, at: position) ? statement.int(at: Int32(position)) != 0 : nil
  }

  func string(at position: Int) -> String? {
    holds(.string, at: position) ? statement.string(at: Int32(position)) : nil
  }

  func date(at position: Int) -> Date? {
    holds(.date, at: position) ? Value.date(microsecondsSince1970: statement.int(at: Int32(position))) : nil
  }
}
