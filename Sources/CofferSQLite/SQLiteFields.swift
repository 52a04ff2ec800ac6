import CSQLite
@_spi(Backend) import Coffer
import Foundation

/// The current row of a statement, read column by column in place: a value is built straight
/// from `sqlite3_column_*`, with no ``Coffer/Row`` in between. One instance serves every row of
/// a read; it is valid until the statement steps.
///
/// A class, so that handing it over as `any StoredFields` copies one reference. The typed
/// accessors ask SQLite for a column's type only when the value itself cannot tell: a text
/// column's pointer is `NULL` exactly for a null, and a number other than zero is never one.
final class SQLiteFields: StoredFields {
  private let handle: OpaquePointer
  private let statement: SQLiteStatement
  /// The field kinds, in column order.
  private let kinds: [FieldKind]
  let count: Int

  init(statement: SQLiteStatement, kinds: [FieldKind]) {
    self.statement = statement
    self.handle = statement.handle
    self.kinds = kinds
    self.count = kinds.count
  }

  func value(at position: Int) throws -> Value { try statement.value(at: Int32(position), kinds[position]) }

  func isNull(at position: Int) -> Bool {
    position < count && sqlite3_column_type(handle, Int32(position)) == SQLITE_NULL
  }

  /// Whether the field at a position is of `kind`.
  private func declared(_ kind: FieldKind, at position: Int) -> Bool {
    position < count && kinds[position] == kind
  }

  /// The column's integer, when it is not null.
  private func number(at position: Int) -> Int64? {
    let column = Int32(position)
    let number = sqlite3_column_int64(handle, column)
    return number != 0 || sqlite3_column_type(handle, column) != SQLITE_NULL ? number : nil
  }

  func int(at position: Int) -> Int64? {
    declared(.int, at: position) ? number(at: position) : nil
  }

  func double(at position: Int) -> Double? {
    guard declared(.double, at: position) else { return nil }
    let column = Int32(position)
    let number = sqlite3_column_double(handle, column)
    return number != 0 || sqlite3_column_type(handle, column) != SQLITE_NULL ? number : nil
  }

  func bool(at position: Int) -> Bool? {
    declared(.bool, at: position) ? number(at: position).map { $0 != 0 } : nil
  }

  func string(at position: Int) -> String? {
    declared(.string, at: position) ? statement.text(at: Int32(position)) : nil
  }

  func date(at position: Int) -> Date? {
    declared(.date, at: position) ? number(at: position).map(Value.date(microsecondsSince1970:)) : nil
  }

  /// The column's 16 bytes, or `nil` for a null or a blob of another size, which ``value(at:)``
  /// then reads (and reports as damage).
  func uuid(at position: Int) -> UUID? {
    guard declared(.uuid, at: position) else { return nil }
    let column = Int32(position)
    guard let base = sqlite3_column_blob(handle, column), sqlite3_column_bytes(handle, column) == 16 else {
      return nil
    }
    return UUID(uuid: UnsafeRawPointer(base).loadUnaligned(as: uuid_t.self))
  }
}
