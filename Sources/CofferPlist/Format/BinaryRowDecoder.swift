@_spi(Backend) import Coffer
import Foundation

/// Decodes the rows of one entity straight from a binary plist into ``Row``s: each value object
/// is read as its field's kind, and each key object is resolved to a field position once, not
/// once per row. Unusual encodings (another tool's choices) fall back to the general reader.
struct BinaryRowDecoder {
  let reader: BinaryPlistReader
  let schema: EntitySchema
  /// Field position per key object number: -2 not yet seen, -1 not a field of the schema.
  private var keyPositions: [Int32]
  private let kinds: [FieldKind]
  /// A row of nulls, one per field: copying it is cheaper than making one.
  private let nullRow: [Value]
  /// The positions of the fields that may not be null.
  private let required: [Int]

  init(reader: BinaryPlistReader, schema: EntitySchema) {
    self.reader = reader
    self.schema = schema
    self.keyPositions = Array(repeating: -2, count: reader.objectCount)
    self.kinds = schema.fields.map(\.kind)
    self.nullRow = Array(repeating: .null, count: schema.fields.count)
    self.required = schema.fields.indices.filter { !schema.fields[$0].isOptional }
  }

  mutating func rows(ofArray number: Int) throws -> [Row] {
    let references = try reader.references(of: number, expecting: 0xA0)
    var rows: [Row] = []
    rows.reserveCapacity(references.count)
    for (index, reference) in references.enumerated() {
      rows.append(try row(reference, index: index))
    }
    return rows
  }

  private mutating func row(_ number: Int, index: Int) throws -> Row {
    let offset = try reader.offset(of: number)
    let marker = UInt8(try reader.read(at: offset, size: 1))
    guard marker >> 4 == 0xD else {
      throw LayoutError("row \(index) of '\(schema.name)' is not a dictionary")
    }
    let (count, start) = try reader.length(marker, at: offset)
    let size = reader.referenceSize
    try reader.check(at: start, size: 2 * count * size)
    var values = nullRow
    for entry in 0..<count {
      let key = Int(BinaryPlistReader.readUInt(reader.bytes, at: start + entry * size, size: size))
      let position = try fieldPosition(ofKey: key)
      guard position >= 0 else { continue }
      let object = Int(
        BinaryPlistReader.readUInt(reader.bytes, at: start + (count + entry) * size, size: size))
      guard let value = try value(object, kind: kinds[position]) else {
        let field = schema.fields[position]
        throw LayoutError(
          "row \(index) of '\(schema.name)' has a value for field '\(field.name)' that is not a \(field.kind)"
        )
      }
      values[position] = value
    }
    if required.contains(where: { values[$0].isNull }) {
      try StoreLayout.fillRequired(&values, schema: schema, index: index)
    }
    return Row(values)
  }

  private mutating func fieldPosition(ofKey number: Int) throws -> Int {
    guard number >= 0, number < keyPositions.count else {
      throw PlistSyntaxError(offset: 0, reason: "reference to object \(number) of \(keyPositions.count)")
    }
    let known = keyPositions[number]
    if known != -2 { return Int(known) }
    guard case .string(let key) = try reader.value(number) else {
      throw LayoutError("a row of '\(schema.name)' has a key that is not a string")
    }
    let position = schema.position(of: key) ?? -1
    keyPositions[number] = Int32(position)
    return position
  }

  /// The value of an object read as a field kind, or `nil` if it does not fit the kind.
  private func value(_ number: Int, kind: FieldKind) throws -> Value? {
    let position = try reader.offset(of: number)
    let marker = UInt8(try reader.read(at: position, size: 1))
    switch (kind, marker >> 4) {
    case (.int, 0x1), (.date, 0x1):
      let size = 1 << Int(marker & 0x0F)
      guard size <= 8 else { break }
      let raw = try reader.read(at: position + 1, size: size)
      let number = size == 8 ? Int64(bitPattern: raw) : Int64(raw)
      return kind == .int ? .int(number) : .date(Value.date(microsecondsSince1970: number))
    case (.double, 0x2) where marker == 0x23:
      let number = Double(bitPattern: try reader.read(at: position + 1, size: 8))
      return number.isNaN ? nil : .double(number)
    case (.bool, 0x0) where marker == 0x08 || marker == 0x09:
      return .bool(marker == 0x09)
    case (.string, 0x5), (.uuid, 0x5), (.document, 0x5):
      let (count, start) = try reader.length(marker, at: position)
      try reader.check(at: start, size: count)
      let text = String(decoding: reader.bytes[start..<(start + count)], as: UTF8.self)
      switch kind {
      case .uuid: return UUID(uuidString: text).map(Value.uuid)
      case .document: return .document(Data(text.utf8))
      default: return .string(text)
      }
    case (.bytes, 0x4):
      let (count, start) = try reader.length(marker, at: position)
      try reader.check(at: start, size: count)
      return .bytes(Data(reader.bytes[start..<(start + count)]))
    default:
      break
    }
    return StoreLayout.value(try reader.value(number), kind: kind)
  }
}
