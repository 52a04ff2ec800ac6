@_spi(Backend) import Coffer

/// A row already encoded in the store file's format, kept between writes so that a commit
/// re-encodes only the rows it changed.
///
/// XML: the row's `<dict>…</dict>` text. Binary: the row's value objects back to back, their
/// lengths, and which fields they belong to; the row's dictionary object is rebuilt at write
/// time because it refers to objects by number.
struct EncodedRow: Sendable {
  var bytes: [UInt8]
  var lengths: [Int32]
  var fields: [Int32]
}

enum RowFragments {
  static let rowDepth = 3

  static func encode(_ row: Row, schema: EntitySchema, format: PlistBackend.Format) -> EncodedRow {
    switch format {
    case .xml:
      var writer = XMLPlistWriter()
      writer.indent(rowDepth)
      writer.append("<dict>\n")
      for (position, field) in schema.fields.enumerated() {
        guard let value = StoreLayout.plist(row[position]) else { continue }
        writer.indent(rowDepth + 1)
        writer.writeKey(field.name)
        writer.write(value, depth: rowDepth + 1)
      }
      writer.indent(rowDepth)
      writer.append("</dict>\n")
      return EncodedRow(bytes: writer.bytes, lengths: [], fields: [])
    case .binary:
      var bytes: [UInt8] = []
      var lengths: [Int32] = []
      var fields: [Int32] = []
      for position in 0..<schema.fields.count {
        guard let value = StoreLayout.plist(row[position]) else { continue }
        let start = bytes.count
        BinaryPlistObjects.appendScalar(value, to: &bytes)
        lengths.append(Int32(bytes.count - start))
        fields.append(Int32(position))
      }
      return EncodedRow(bytes: bytes, lengths: lengths, fields: fields)
    }
  }
}
