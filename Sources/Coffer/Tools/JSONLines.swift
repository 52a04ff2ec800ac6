import Foundation

/// The export format: JSON Lines, one JSON object per line, each with one key saying what it is.
///
/// ```
/// {"coffer":"export","version":1}
/// {"entity":{"fields":[…],"idField":"id","indexes":[…],"name":"Message"},"rows":2}
/// {"row":{"id":1,"text":"Hello","date":"2026-11-25T17:58:14.123456Z","read":false}}
/// {"row":{"id":2,"text":"Bye","date":"2026-11-25T17:59:00.000000Z","read":true}}
/// {"end":{"entities":[{"hash":"5f0c…","name":"Message","rows":2}]}}
/// ```
///
/// A header line per entity carries its exact stored schema and row count; the rows that follow
/// belong to it, each an object of its fields in schema order; the last line carries every
/// entity's digest (``EntityDigest/rowsHash``), so that an import proves it read everything
/// the export wrote. Values by kind: `bool`, `int` (exact, as a JSON integer) and `string`
/// (byte for byte) as JSON values; `double` as a JSON number (`-0.0` keeps its sign) or the
/// string `"inf"` / `"-inf"`; `bytes` and `document` as base64; `date` as ISO 8601 in UTC to
/// the microsecond; `uuid` as its text; null as `null`.
package enum JSONLines {
  /// The format version this release writes and reads.
  package static let version = 1

  /// The first line of an export.
  package static var opening: String { #"{"coffer":"export","version":\#(version)}"# + "\n" }

  /// The header line of an entity.
  package static func header(_ schema: EntitySchema, rows: Int) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let schemaText = String(decoding: try encoder.encode(schema), as: UTF8.self)
    return #"{"entity":\#(schemaText),"rows":\#(rows)}"# + "\n"
  }

  /// The closing line, with every entity's digest.
  package static func closing(_ digest: StoreDigest) -> String {
    var text = #"{"end":{"entities":["#
    for (index, entity) in digest.entities.enumerated() {
      if index > 0 { text += "," }
      text += #"{"hash":"\#(entity.rowsHash)","name":"#
      appendString(entity.entity, to: &text)
      text += #","rows":\#(entity.count)}"#
    }
    return text + "]}}\n"
  }

  /// Appends the line of a row.
  package static func appendRow(_ row: Row, of schema: EntitySchema, to text: inout String) {
    text += #"{"row":{"#
    for (position, field) in schema.fields.enumerated() {
      if position > 0 { text += "," }
      appendString(field.name, to: &text)
      text += ":"
      appendValue(row[position], to: &text)
    }
    text += "}}\n"
  }

  /// Appends a value in its export form.
  package static func appendValue(_ value: Value, to text: inout String) {
    switch value {
    case .null: text += "null"
    case .bool(let flag): text += flag ? "true" : "false"
    case .int(let int): text += String(int)
    case .double(let double):
      if double.isFinite {
        text += double.description
      } else {
        text += double > 0 ? #""inf""# : #""-inf""#
      }
    case .string(let string): appendString(string, to: &text)
    case .bytes(let data), .document(let data): text += "\"" + data.base64EncodedString() + "\""
    case .date(let date):
      text += "\"" + ExportDate.text(microseconds: Value.microseconds(since1970: date)) + "\""
    case .uuid(let uuid): text += "\"" + uuid.uuidString + "\""
    }
  }

  /// Appends a JSON string: quotes, backslashes and control characters escaped, everything
  /// else as it is.
  package static func appendString(_ string: String, to text: inout String) {
    text += "\""
    var plainStart = string.utf8.startIndex
    for index in string.utf8.indices {
      let byte = string.utf8[index]
      guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
      text += string[plainStart..<index]
      switch byte {
      case UInt8(ascii: "\""): text += "\\\""
      case UInt8(ascii: "\\"): text += "\\\\"
      case 0x0A: text += "\\n"
      case 0x0D: text += "\\r"
      case 0x09: text += "\\t"
      default:
        let hex = String(byte, radix: 16)
        text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      }
      plainStart = string.utf8.index(after: index)
    }
    text += string[plainStart...]
    text += "\""
  }
}
