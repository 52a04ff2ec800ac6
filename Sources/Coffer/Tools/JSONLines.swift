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
enum JSONLines {
  /// The format version this release writes and reads.
  static let version = 1

  /// The first line of an export.
  static var opening: String { #"{"coffer":"export","version":\#(version)}"# + "\n" }

  /// The header line of an entity.
  static func header(_ schema: EntitySchema, rows: Int) throws -> String {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    let schemaText = String(decoding: try encoder.encode(schema), as: UTF8.self)
    return #"{"entity":\#(schemaText),"rows":\#(rows)}"# + "\n"
  }

  /// The closing line, with every entity's digest.
  static func closing(_ digest: StoreDigest) -> String {
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
  static func appendRow(_ row: Row, of schema: EntitySchema, to text: inout String) {
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
  static func appendValue(_ value: Value, to text: inout String) {
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
  static func appendString(_ string: String, to text: inout String) {
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

extension Store {
  /// Writes the store's data as JSON Lines (the format is described in `Docs/Tools.md`): an
  /// opening line, then per entity a header with its exact schema and row count followed by
  /// its rows in id order, then a closing line with every entity's digest.
  ///
  /// Reads one snapshot when the backend has ``SnapshotReading``, a page of rows
  /// at a time, and hands `write` whole lines — about a page of rows per call — so memory stays
  /// flat however large the store. Every kind round-trips exactly through
  /// ``StoreImporter``.
  ///
  /// - Parameters:
  ///   - entities: The entities to export, or `nil` for all of them.
  ///   - write: Receives the text, in order; an error it throws stops the export.
  /// - Returns: The digest of what was exported.
  /// - Throws: ``CofferError/Code/unknownEntity`` for a named entity the store does not hold,
  ///   the backend's error, or what `write` threw.
  @discardableResult
  public func exportJSONLines(entities: [String]? = nil, write: (String) async throws -> Void) async throws
    -> StoreDigest
  {
    let schemas = try await storedSchemas(named: entities)
    return try await withRowReader { reader in
      try await write(JSONLines.opening)
      var digests: [EntityDigest] = []
      for schema in schemas {
        try await write(try JSONLines.header(schema, rows: try await reader.count(of: schema)))
        var digester = RowDigester(schema: schema)
        try await reader.pages(of: schema, pageSize: 1_000) { rows in
          var text = ""
          for row in rows {
            digester.add(row)
            JSONLines.appendRow(row, of: schema, to: &text)
          }
          try await write(text)
        }
        digests.append(digester.digest)
      }
      let digest = StoreDigest(entities: digests)
      try await write(JSONLines.closing(digest))
      return digest
    }
  }
}
