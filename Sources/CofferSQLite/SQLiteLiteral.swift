@_spi(Backend) import Coffer
import Foundation

/// SQL literals for column defaults, where DDL cannot take bound parameters: each is the value
/// as ``SQLiteStatement`` binds it, so a default reads back like a bound value.
enum SQLiteLiteral {
  /// The literal of a value, or `nil` when SQLite has none that reads back exactly (a string with
  /// a NUL character, which a literal would cut).
  static func sql(_ value: Value) -> String? {
    switch value {
    case .null: return "NULL"
    case .bool(let flag): return flag ? "1" : "0"
    case .int(let number): return String(number)
    case .date(let date): return String(Value.microseconds(since1970: date))
    case .double(let number):
      if number.isInfinite { return number < 0 ? "-9e999" : "9e999" }
      // A literal without a fraction or exponent would be read as an integer.
      let text = "\(number)"
      return text.contains(where: { $0 == "." || $0 == "e" }) ? text : text + ".0"
    case .string(let text):
      guard !text.utf8.contains(0) else { return nil }
      return "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    case .document(let data):
      guard !data.contains(0) else { return nil }
      return "'" + String(decoding: data, as: UTF8.self).replacingOccurrences(of: "'", with: "''") + "'"
    case .bytes(let data): return "X'" + hex(data) + "'"
    case .uuid(let uuid): return withUnsafeBytes(of: uuid.uuid) { "X'" + hex($0) + "'" }
    }
  }

  private static func hex(_ bytes: some Sequence<UInt8>) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
  }
}
