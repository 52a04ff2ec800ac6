@_spi(Backend) import Coffer
import Foundation

/// Reads an XML store document in one pass, decoding the rows under `entities` straight into
/// ``Row``s instead of first building a ``PlistValue`` tree of them.
///
/// The root dictionary's other entries (the header and the schemas, which are small) are parsed
/// as values. Rows are decoded directly only once the header and schemas have been read, which
/// is the order Coffer writes; a file whose `entities` come first (a tool that sorts keys) is
/// parsed as values and converted afterwards. In a row, keys are matched as bytes against the
/// schema's field names, and the common encodings (an `<integer>` for an int or date,
/// `<true/>`/`<false/>`, `<string>`) are read as the field's kind; anything else goes through
/// the general parser and ``StoreLayout/value(_:kind:)``, so both ways accept the same files.
struct XMLStoreDecoder {
  /// The document's root entries (`nil` when the top value is not a dictionary), without the
  /// `entities` entry when its rows were decoded directly into `rows`.
  struct Document {
    var root: [(key: String, value: PlistValue)]?
    var rows: [(entity: String, rows: [Row])]?
  }

  /// Reads a whole document. `schemas` is asked, when `entities` is reached, for the checked
  /// schemas given the root entries read so far; it returns `nil` to have the rows read as values.
  static func read(
    _ bytes: [UInt8], schemas: ([(key: String, value: PlistValue)]) throws -> [EntitySchema]?
  ) throws -> Document {
    try bytes.withUnsafeBufferPointer { buffer in
      var decoder = XMLStoreDecoder(reader: XMLPlistReader(buffer))
      return try decoder.document(schemas: schemas)
    }
  }

  private var reader: XMLPlistReader

  private init(reader: XMLPlistReader) { self.reader = reader }

  private mutating func document(
    schemas: ([(key: String, value: PlistValue)]) throws -> [EntitySchema]?
  ) throws -> Document {
    try reader.openDocument()
    var document = Document()
    let start = reader.index
    let tag = try reader.readTag()
    if tag.name == .dict, !tag.isClosing, !tag.isEmpty {
      var entries: [(key: String, value: PlistValue)] = []
      var sawEntities = false
      while let key = try nextKey() {
        if key == "entities", !sawEntities, let checked = try schemas(entries) {
          document.rows = try entities(checked)
        } else {
          entries.append((key, try reader.parseValue(depth: 1)))
        }
        sawEntities = sawEntities || key == "entities"
      }
      document.root = entries
    } else {
      reader.index = start
      if case .dict(let entries) = try reader.parseValue(depth: 0) { document.root = entries }
    }
    try reader.closeDocument()
    return document
  }

  /// A dictionary key: its bytes in the document when it is plain text, or the text read from
  /// a key with entities, CDATA or carriage returns.
  private enum Key {
    case bytes(Range<Int>)
    case text(String)
  }

  /// The next key of a dictionary whose opening tag was read, as a string, or `nil` after the
  /// dictionary's closing tag; leaves the reader at the key's value.
  private mutating func nextKey() throws -> String? {
    switch try nextRawKey() {
    case .bytes(let range)?:
      String(decoding: UnsafeBufferPointer(rebasing: reader.bytes[range]), as: UTF8.self)
    case .text(let text)?: text
    case nil: nil
    }
  }

  /// Like ``nextKey()``, without making a string of a plain key.
  private mutating func nextRawKey() throws -> Key? {
    reader.skipWhitespaceAndComments()
    let saved = reader.index
    let tag = try reader.readTag()
    if tag.isClosing {
      guard tag.name == .dict else { throw reader.fail("expected </dict>, found </\(tag.name.text)>") }
      return nil
    }
    guard tag.name == .key else {
      reader.index = saved
      throw reader.fail("expected <key> in <dict>, found <\(tag.name.text)>")
    }
    var key = Key.bytes(reader.index..<reader.index)
    if !tag.isEmpty {
      let bytes = reader.bytes
      let end = reader.plainTextEnd(from: reader.index)
      if end + 1 < bytes.count, bytes[end] == UInt8(ascii: "<"), bytes[end + 1] == UInt8(ascii: "/") {
        key = .bytes(reader.index..<end)
        reader.index = end
        let close = try reader.readTag()
        guard close.isClosing, close.name == .key else { throw reader.fail("expected </key>") }
      } else {
        key = .text(try reader.text(closing: .key))
      }
    }
    reader.skipWhitespaceAndComments()
    return key
  }

  // MARK: Entities and rows

  /// Opens a container of the layout (`<dict>` or `<array>`) and says whether it is empty. Any
  /// other value is parsed, so that a syntax error in it is reported as such, and then it is a
  /// layout error with `message`.
  private mutating func open(_ name: XMLPlistReader.Name, depth: Int, otherwise message: String) throws
    -> Bool
  {
    let start = reader.index
    let tag = try reader.readTag()
    guard tag.name == name, !tag.isClosing else {
      reader.index = start
      _ = try reader.parseValue(depth: depth)
      throw LayoutError.layout(message)
    }
    return tag.isEmpty
  }

  private mutating func entities(_ schemas: [EntitySchema]) throws -> [(entity: String, rows: [Row])] {
    var result: [(entity: String, rows: [Row])] = []
    if try open(.dict, depth: 1, otherwise: "'entities' is not a dictionary") { return result }
    while let entity = try nextKey() {
      let schema = try StoreReader.schemaOf(entity, in: schemas)
      result.append((entity, try rows(of: schema)))
    }
    return result
  }

  private mutating func rows(of schema: EntitySchema) throws -> [Row] {
    var rows: [Row] = []
    if try open(.array, depth: 2, otherwise: "entity '\(schema.name)' is not an array") { return rows }
    var keys = XMLFieldKeys(schema)
    while true {
      reader.skipWhitespaceAndComments()
      if reader.starts(with: "</") {
        let close = try reader.readTag()
        guard close.name == .array else {
          throw reader.fail("expected </array>, found </\(close.name.text)>")
        }
        return rows
      }
      rows.append(try row(schema, keys: &keys, index: rows.count))
    }
  }

  private mutating func row(_ schema: EntitySchema, keys: inout XMLFieldKeys, index: Int) throws -> Row {
    var values = keys.nullRow
    if !reader.skip("<dict>") {
      let start = reader.index
      let tag = try reader.readTag()
      guard tag.name == .dict, !tag.isClosing else {
        reader.index = start
        let value = try reader.parseValue(depth: 3)
        throw LayoutError("row \(index) of '\(schema.name)' is a \(value.typeName), not a dictionary")
      }
      if tag.isEmpty {
        try StoreLayout.fillRequired(&values, schema: schema, index: index)
        return Row(values)
      }
    }
    var entry = 0
    while true {
      let position: Int
      let gapStart = reader.index
      if entry < keys.gaps.count, reader.skip(keys.gaps[entry].bytes) {
        position = keys.gaps[entry].position
        reader.skipWhitespaceAndComments()
      } else {
        reader.skipWhitespaceAndComments()
        if reader.skip("</dict>") { break }
        guard let key = try nextRawKey() else { break }
        position =
          switch key {
          case .bytes(let range): keys.position(of: reader.bytes, range, entry: entry, schema: schema)
          case .text(let text): schema.position(of: text) ?? -1
          }
        keys.learn(entry, reader.bytes, gapStart..<reader.index, position: position)
      }
      entry += 1
      guard position >= 0 else {
        _ = try reader.parseValue(depth: 4)
        continue
      }
      values[position] = try value(of: keys.kinds[position], at: position, schema: schema, row: index)
    }
    if keys.required.contains(where: { values[$0].isNull }) {
      try StoreLayout.fillRequired(&values, schema: schema, index: index)
    }
    return Row(values)
  }

  /// A field's value, read as the field's kind: the encodings Coffer writes are matched as bytes,
  /// anything else is parsed as a value and converted.
  private mutating func value(of kind: FieldKind, at position: Int, schema: EntitySchema, row: Int) throws
    -> Value
  {
    let start = reader.index
    switch kind {
    case .int, .date:
      if reader.skip("<integer>"), let (number, end) = reader.decimal(at: reader.index) {
        reader.index = end
        if reader.skip("</integer>") {
          return kind == .int ? .int(number) : .date(Value.date(microsecondsSince1970: number))
        }
      }
    case .bool:
      if reader.skip("<true/>") { return .bool(true) }
      if reader.skip("<false/>") { return .bool(false) }
    case .string:
      if reader.skip("<string>") {
        let textStart = reader.index
        let end = reader.plainTextEnd(from: textStart)
        reader.index = end
        if reader.skip("</string>") {
          return .string(
            String(decoding: UnsafeBufferPointer(rebasing: reader.bytes[textStart..<end]), as: UTF8.self))
        }
      }
    default: break
    }
    reader.index = start
    let plist = try reader.parseValue(depth: 4)
    guard let value = StoreLayout.value(plist, kind: kind) else {
      let field = schema.fields[position]
      throw LayoutError(
        "row \(row) of '\(schema.name)' has \(plist.typeName) for field '\(field.name)', which holds \(field.kind)"
      )
    }
    return value
  }
}
