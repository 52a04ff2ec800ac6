import Coffer

/// A schema's field names as UTF-8, to match row keys without making strings. Rows usually
/// list their keys in the same order, so the field found for each key position is tried first,
/// as the whole `<key>NAME</key>` element.
struct XMLFieldKeys {
  let names: [[UInt8]]
  let kinds: [FieldKind]
  /// Each field's key element as written, or empty when its name needs escaping in XML.
  let elements: [[UInt8]]
  /// Whether every field name is ASCII: then a key that is ASCII and matches no name bytewise
  /// names no field (Unicode equivalence cannot make it equal to one).
  let namesAreASCII: Bool
  /// The positions of the fields that may not be null.
  let required: [Int]
  /// The field found for each key position of the last row, -1 for none.
  var order: [Int] = []

  init(_ schema: EntitySchema) {
    names = schema.fields.map { Array($0.name.utf8) }
    kinds = schema.fields.map(\.kind)
    elements = names.map { name in
      let plain = !name.contains {
        [UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"), 0x0D].contains($0)
      }
      return plain ? Array("<key>".utf8) + name + Array("</key>".utf8) : []
    }
    namesAreASCII = names.allSatisfy { $0.allSatisfy { $0 < 0x80 } }
    required = schema.fields.indices.filter { !schema.fields[$0].isOptional }
  }

  /// The field the key at this position named in the last row, if it has a plain key element.
  @inline(__always)
  func expected(_ entry: Int) -> Int? {
    guard entry < order.count, order[entry] >= 0, !elements[order[entry]].isEmpty else { return nil }
    return order[entry]
  }

  /// The position of the field named by the key bytes, or -1 when it names none.
  mutating func position(
    of bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, entry: Int, schema: EntitySchema
  ) -> Int {
    if entry < order.count, order[entry] >= 0, matches(bytes, range, names[order[entry]]) {
      return order[entry]
    }
    var found = -1
    for (position, name) in names.enumerated() where matches(bytes, range, name) {
      found = position
      break
    }
    if found < 0, !(namesAreASCII && bytes[range].allSatisfy { $0 < 0x80 }) {
      found =
        schema.position(of: String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self))
        ?? -1
    }
    if entry < order.count {
      order[entry] = found
    } else if entry == order.count {
      order.append(found)
    }
    return found
  }

  private func matches(_ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, _ name: [UInt8]) -> Bool {
    guard name.count == range.count else { return false }
    var offset = range.lowerBound
    for byte in name {
      if bytes[offset] != byte { return false }
      offset += 1
    }
    return true
  }
}
