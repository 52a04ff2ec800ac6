import Coffer
import Foundation

/// The bytes of a stored row (Docs/Formats.md, "LMDB stores"):
///
/// ```
/// row   = version:u8 layout:varint count:varint value{count}
/// value = tag:u8 payload
/// ```
///
/// Tags: 0 null · 1 false · 2 true · 3 int (zigzag varint) · 4 double (8 bytes, little-endian
/// IEEE bits) · 5 string (varint length, UTF-8) · 6 bytes (varint length, bytes) · 7 date
/// (zigzag varint microseconds since 1970) · 8 uuid (16 bytes) · 9 document (varint length,
/// canonical JSON).
enum RowCodec {
  /// The row format this Coffer writes, and the newest it reads.
  static let version: UInt8 = 1

  /// Appends a row's encoding to `bytes`, under the layout (stored schema number) `layout`.
  static func encode(_ values: [Value], layout: Int, into bytes: inout [UInt8]) {
    bytes.append(version)
    appendVarint(UInt64(layout), to: &bytes)
    appendVarint(UInt64(values.count), to: &bytes)
    for value in values {
      switch value {
      case .null: bytes.append(0)
      case .bool(let flag): bytes.append(flag ? 2 : 1)
      case .int(let number):
        bytes.append(3)
        appendVarint(zigzag(number), to: &bytes)
      case .double(let number):
        bytes.append(4)
        withUnsafeBytes(of: number.bitPattern.littleEndian) { bytes.append(contentsOf: $0) }
      case .string(var text):
        bytes.append(5)
        text.withUTF8 { utf8 in
          appendVarint(UInt64(utf8.count), to: &bytes)
          bytes.append(contentsOf: utf8)
        }
      case .bytes(let data):
        bytes.append(6)
        appendVarint(UInt64(data.count), to: &bytes)
        bytes.append(contentsOf: data)
      case .date(let date):
        bytes.append(7)
        appendVarint(zigzag(Value.microseconds(since1970: date)), to: &bytes)
      case .uuid(let uuid):
        bytes.append(8)
        withUnsafeBytes(of: uuid.uuid) { bytes.append(contentsOf: $0) }
      case .document(let data):
        bytes.append(9)
        appendVarint(UInt64(data.count), to: &bytes)
        bytes.append(contentsOf: data)
      }
    }
  }

  /// The layout number a row was written under, read from its header.
  static func layout(of bytes: UnsafeRawBufferPointer) throws(RowDamage) -> Int {
    var reader = ByteReader(bytes)
    return try reader.header()
  }

  /// Decodes a row written under layout `layout`, whose fields are `schema`'s, checking every
  /// length and kind; throws ``RowDamage/otherLayout(_:)`` for a row of another layout.
  static func decode(_ bytes: UnsafeRawBufferPointer, schema: EntitySchema, layout: Int) throws(RowDamage)
    -> [Value]
  {
    try decode(bytes, kinds: schema.fields.map(\.kind), layout: layout, schema: schema)
  }

  /// ``decode(_:schema:layout:)`` with the field kinds worked out once; `schema` only names
  /// fields in errors.
  static func decode(_ bytes: UnsafeRawBufferPointer, kinds: [FieldKind], layout: Int, schema: EntitySchema)
    throws(RowDamage) -> [Value]
  {
    var values: [Value] = []
    values.reserveCapacity(kinds.count)
    try slots(bytes, kinds: kinds, layout: layout, schema: schema) { _, slot in
      values.append(value(slot, in: bytes))
    }
    return values
  }

  /// Where one value of a row lies, as ``slots(_:kinds:layout:schema:_:)`` found it.
  struct Slot {
    /// The value's tag; 0 (null) for a slot not yet found.
    var tag: UInt8 = 0
    /// A varint as stored (tags 3 and 7), or a double's bits (tag 4).
    var number: UInt64 = 0
    /// Where the payload of a string, bytes, document or UUID starts, and its length.
    var start = 0
    var length = 0
  }

  /// Walks a row written under layout `layout`, checking its header and every tag, length and
  /// kind, and that each string is UTF-8, and calls `found` with each value's position and slot
  /// in order. Throws ``RowDamage/otherLayout(_:)`` for a row of another layout. `schema` only
  /// names fields in errors.
  static func slots(
    _ bytes: UnsafeRawBufferPointer, kinds: [FieldKind], layout: Int, schema: EntitySchema,
    _ found: (Int, Slot) -> Void
  ) throws(RowDamage) {
    var reader = ByteReader(bytes)
    let stored = try reader.header()
    guard stored == layout else { throw .otherLayout(stored) }
    let count = try reader.length()
    guard count == kinds.count else {
      throw .malformed("it holds \(count) values but its schema has \(kinds.count) fields")
    }
    func name(_ position: Int) -> String {
      schema.fields.indices.contains(position) ? schema.fields[position].name : "#\(position)"
    }
    /// Notes where a payload of `length` bytes starts in the slot, and steps over it.
    func span(_ slot: inout Slot, _ length: Int) throws(RowDamage) -> UnsafeRawBufferPointer {
      slot.start = reader.position
      slot.length = length
      return try reader.bytes(length)
    }
    for position in 0..<count {
      var slot = Slot()
      slot.tag = try reader.byte()
      let kind: FieldKind?
      switch slot.tag {
      case 0: kind = nil
      case 1, 2: kind = .bool
      case 3, 7:
        slot.number = try reader.varint()
        kind = slot.tag == 3 ? .int : .date
      case 4:
        slot.number = UInt64(littleEndian: try reader.fixed(UInt64.self))
        kind = .double
      case 5:
        guard UTF8Validation.isValid(try span(&slot, try reader.length())) else {
          throw .malformed("field '\(name(position))' holds a string that is not UTF-8")
        }
        kind = .string
      case 6:
        _ = try span(&slot, try reader.length())
        kind = .bytes
      case 8:
        _ = try span(&slot, 16)
        kind = .uuid
      case 9:
        _ = try span(&slot, try reader.length())
        kind = .document
      default: throw .malformed("field '\(name(position))' has unknown value tag \(slot.tag)")
      }
      if let kind, kind != kinds[position] {
        throw .malformed("field '\(name(position))' holds a \(kind) but is declared \(kinds[position])")
      }
      found(position, slot)
    }
    guard reader.isAtEnd else { throw .malformed("it has \(reader.remaining) bytes after its last value") }
  }

  /// The value a slot of `bytes` stands for; the slot was checked when it was found.
  static func value(_ slot: Slot, in bytes: UnsafeRawBufferPointer) -> Value {
    func payload() -> UnsafeRawBufferPointer {
      UnsafeRawBufferPointer(rebasing: bytes[slot.start..<(slot.start + slot.length)])
    }
    switch slot.tag {
    case 1: return .bool(false)
    case 2: return .bool(true)
    case 3: return .int(unzigzag(slot.number))
    case 4: return .double(Double(bitPattern: slot.number))
    case 5: return .string(String(decoding: payload(), as: UTF8.self))
    case 6: return .bytes(Data(payload()))
    case 7: return .date(Value.date(microsecondsSince1970: unzigzag(slot.number)))
    case 8: return .uuid(UUID(uuid: payload().loadUnaligned(as: uuid_t.self)))
    case 9: return .document(Data(payload()))
    default: return .null
    }
  }

  static func appendVarint(_ number: UInt64, to bytes: inout [UInt8]) {
    var rest = number
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  static func zigzag(_ number: Int64) -> UInt64 { UInt64(bitPattern: (number << 1) ^ (number >> 63)) }

  static func unzigzag(_ number: UInt64) -> Int64 {
    Int64(bitPattern: number >> 1) ^ -Int64(bitPattern: number & 1)
  }
}

/// Why a stored row could not be read.
enum RowDamage: Error {
  /// The row was written by a newer Coffer, in this row format.
  case newerFormat(UInt8)
  /// The bytes are not a row; the text says what is wrong.
  case malformed(String)
  /// The row was written under another layout (stored schema) than the one asked for.
  case otherLayout(Int)
}

/// Reads a byte buffer front to back, never past its end.
struct ByteReader {
  private let buffer: UnsafeRawBufferPointer
  private var offset = 0

  init(_ buffer: UnsafeRawBufferPointer) { self.buffer = buffer }

  /// How many bytes have been read.
  var position: Int { offset }

  var isAtEnd: Bool { offset == buffer.count }

  /// Reads a row's format version and layout number.
  mutating func header() throws(RowDamage) -> Int {
    let format = try byte()
    guard format <= RowCodec.version else { throw .newerFormat(format) }
    guard format == RowCodec.version else { throw .malformed("unknown row format \(format)") }
    let layout = try varint()
    guard layout <= UInt64(Int32.max) else { throw .malformed("layout number \(layout) is out of range") }
    return Int(layout)
  }
  var remaining: Int { buffer.count - offset }

  mutating func byte() throws(RowDamage) -> UInt8 {
    guard offset < buffer.count else { throw .malformed("it ends early") }
    defer { offset += 1 }
    return buffer[offset]
  }

  mutating func varint() throws(RowDamage) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let next = try byte()
      guard shift < 64, shift < 63 || next <= 1 else { throw .malformed("a number is too long") }
      result |= UInt64(next & 0x7F) << shift
      if next & 0x80 == 0 { return result }
      shift += 7
    }
  }

  /// A varint used as a length or count: at most what is left in the buffer.
  mutating func length() throws(RowDamage) -> Int {
    let number = try varint()
    guard number <= UInt64(buffer.count) else { throw .malformed("a length of \(number) exceeds the row") }
    return Int(number)
  }

  mutating func bytes(_ count: Int) throws(RowDamage) -> UnsafeRawBufferPointer {
    guard count >= 0, count <= buffer.count - offset else { throw .malformed("it ends early") }
    defer { offset += count }
    return UnsafeRawBufferPointer(rebasing: buffer[offset..<(offset + count)])
  }

  mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) throws(RowDamage) -> T {
    let raw = try bytes(MemoryLayout<T>.size)
    return raw.loadUnaligned(as: T.self)
  }
}
