@_spi(Backend) import Coffer

/// A row already encoded in the store file's format, kept between writes so that a commit
/// re-encodes only the rows it changed.
///
/// One array per row, so that a store's cache of a million rows costs a million allocations:
/// - XML: the row's `<dict>…</dict>` text.
/// - Binary: one object for each field of the row's schema, in field order, back to back, with
///   the one-byte null object (``null``, which no store file holds) where the field is null.
///   The row's dictionary object refers to objects by number, so it is made at write time.
struct EncodedRow: Sendable {
  var bytes: [UInt8]

  /// The marker of binary plist's null object, which stands for a null field.
  static let null: UInt8 = 0x00

  /// The length of the binary object at `offset`: one of the scalars
  /// ``BinaryPlistObjects/appendScalar(_:to:)`` writes, or ``null``.
  static func objectLength(_ bytes: UnsafeRawBufferPointer, at offset: Int) -> Int {
    let marker = bytes[offset]
    let low = Int(marker & 0x0F)
    switch marker >> 4 {
    case 0x0: return 1  // null, false, true
    case 0x1, 0x2, 0x3: return 1 + (1 << low)  // integer, real, date
    default:
      // Data (0x4), ASCII (0x5) or UTF-16 (0x6) string: a count in the marker, or an integer
      // object after it.
      var header = 1
      var count = low
      if low == 0x0F {
        let size = 1 << Int(bytes[offset + 1] & 0x0F)
        count = 0
        for index in 0..<size { count = count << 8 | Int(bytes[offset + 2 + index]) }
        header = 2 + size
      }
      return header + (marker >> 4 == 0x6 ? 2 * count : count)
    }
  }

  /// Calls `body` with the field number, offset and length of each object of a binary row's
  /// bytes that is not ``null``, in field order.
  @inline(__always)
  static func forEachValue(
    in source: UnsafeRawBufferPointer, _ body: (_ field: Int, _ offset: Int, _ length: Int) throws -> Void
  ) rethrows {
    var offset = 0
    var field = 0
    while offset < source.count {
      let length = objectLength(source, at: offset)
      if source[offset] != null { try body(field, offset, length) }
      offset += length
      field += 1
    }
  }

  /// How many fields of a binary row are not null, and the bytes their objects take.
  struct Shape {
    var count = 0
    var valueBytes = 0

    init(_ bytes: [UInt8]) {
      var (count, valueBytes) = (0, 0)
      bytes.withUnsafeBytes { source in
        EncodedRow.forEachValue(in: source) { _, _, length in
          count += 1
          valueBytes += length
        }
      }
      (self.count, self.valueBytes) = (count, valueBytes)
    }
  }
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
      return EncodedRow(bytes: writer.bytes)
    case .binary:
      var bytes: [UInt8] = []
      for position in 0..<schema.fields.count {
        if let value = StoreLayout.plist(row[position]) {
          BinaryPlistObjects.appendScalar(value, to: &bytes)
        } else {
          bytes.append(EncodedRow.null)
        }
      }
      return EncodedRow(bytes: bytes)
    }
  }
}
