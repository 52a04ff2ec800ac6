@_spi(Backend) import Coffer
import Foundation

/// ``WireRows`` in JSON written and read by hand: the rows are what the API sends most, and
/// Foundation's `JSONEncoder` and `JSONDecoder` spend more on a page of rows (a keyed container for
/// each value) than the store spends reading them.
///
/// The form is exactly the one `Codable` gives (the Formats article's): `{"rows":[[{"int":1},…],…],
/// "next":{"values":[…]}}`, `next` left out when there is none. Either side may use `Codable` for
/// the same bytes; ``read(_:)`` takes any JSON of that form (white space, keys in any order,
/// escapes) and answers `nil` for anything else, for the caller to hand to `JSONDecoder`, whose
/// error says what is wrong.
package enum WireRowsJSON {
  /// The rows as JSON.
  ///
  /// - Throws: `EncodingError.invalidValue` for a NaN, which no store holds.
  package static func write(_ rows: WireRows) throws -> [UInt8] {
    var text = JSONText(capacity: 64 + rows.rows.count * (rows.rows.first?.count ?? 0) * 24)
    text += #"{"rows":["#
    for (index, row) in rows.rows.enumerated() {
      if index > 0 { text += "," }
      try WireJSON.append(row, to: &text)
    }
    text += "]"
    if let next = rows.next {
      text += #","next":{"values":"#
      try WireJSON.append(next.values, to: &text)
      text += "}"
    }
    text += "}"
    return text.bytes
  }

  /// The rows in `bytes`, or `nil` when they are not JSON of the form ``write(_:)`` writes.
  package static func read(_ bytes: UnsafeRawBufferPointer) -> WireRows? {
    var reader = WireJSON.Reader(bytes: bytes)
    var rows: [[Value]]?
    var next: WireCursor?
    do {
      try reader.object { reader, key in
        switch key {
        case "rows":
          guard rows == nil else { throw WireJSON.Unreadable() }
          rows = try reader.array { try $0.values() }
        case "next":
          guard next == nil else { throw WireJSON.Unreadable() }
          if !reader.consume("null") { next = try WireQueryJSON.cursor(&reader) }
        default: throw WireJSON.Unreadable()
        }
      }
      try reader.end()
    } catch {
      return nil
    }
    return rows.map { WireRows(rows: $0, next: next) }
  }
}
