@_spi(Backend) import Coffer

/// A schema's field names as UTF-8, to match row keys without making strings, and what the
/// last row looked like between its values.
///
/// Rows written by one program are formatted alike: the bytes from the end of one value to the
/// start of the next (white space, the key element, white space) repeat from row to row. Each
/// such gap is remembered with the field its key named, so a row formatted like the last one
/// matches each key with one comparison. Any other row is read element by element, and its
/// gaps are remembered instead.
struct XMLFieldKeys {
  let names: [[UInt8]]
  let kinds: [FieldKind]
  /// A row of nulls, one per field: copying it is cheaper than making one.
  let nullRow: [Value]
  /// Whether every field name is ASCII: then a key that is ASCII and matches no name bytewise
  /// names no field (Unicode equivalence cannot make it equal to one).
  let namesAreASCII: Bool
  /// The positions of the fields that may not be null.
  let required: [Int]
  /// The field found for each key position of the last row, -1 for none.
  var order: [Int] = []
  /// For each key position, the gap before its value in the last row read element by element,
  /// and the field position its key named (-1 for none).
  private(set) var gaps: [(bytes: [UInt8], position: Int)] = []
  /// Gaps longer than this (long comments) are not remembered.
  private static let longestGap = 512

  init(_ schema: EntitySchema) {
    names = schema.fields.map { Array($0.name.utf8) }
    kinds = schema.fields.map(\.kind)
    nullRow = Array(repeating: .null, count: schema.fields.count)
    namesAreASCII = names.allSatisfy { $0.allSatisfy { $0 < 0x80 } }
    required = schema.fields.indices.filter { !schema.fields[$0].isOptional }
  }

  /// Remembers the gap before the value at a key position; `range` runs from the end of the
  /// previous value to the start of this one.
  mutating func learn(_ entry: Int, _ bytes: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, position: Int) {
    guard entry <= gaps.count, range.count <= Self.longestGap else { return }
    let gap = (bytes: Array(bytes[range]), position: position)
    if entry < gaps.count { gaps[entry] = gap } else { gaps.append(gap) }
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
