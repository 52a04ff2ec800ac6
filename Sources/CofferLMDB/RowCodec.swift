@_spi(Backend) import Coffer
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
    appendHeader(layout: layout, count: values.count, to: &bytes)
    for value in values { append(value, to: &bytes) }
  }

  /// Appends a row's header: the format version, the layout and the number of values.
  static func appendHeader(layout: Int, count: Int, to bytes: inout [UInt8]) {
    bytes.append(version)
    appendVarint(UInt64(layout), to: &bytes)
    appendVarint(UInt64(count), to: &bytes)
  }

  /// Appends one value's encoding: its tag, then its payload.
  @inline(__always)
  static func append(_ value: Value, to bytes: inout [UInt8]) {
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
    try Shape(schema: schema, layout: layout).decode(bytes)
  }

  /// What reading a row needs to know of its entity: the schema and layout it was written
  /// under, and for each field the value tags its kind allows, worked out once. A class, so that
  /// the per-row walk reads them through one reference it does not retain.
  final class Shape: @unchecked Sendable {
    /// The fields, which also name them in errors.
    let schema: EntitySchema
    /// The layout number rows of this shape carry.
    let layout: Int
    /// The fields' kinds, by position.
    let kinds: [FieldKind]
    /// For each field, a bit for every tag its kind allows (null for any field). Written only
    /// in `init`, so sharing the shape across tasks is safe.
    private let allowedTags: UnsafeMutableBufferPointer<UInt16>

    init(schema: EntitySchema, layout: Int) {
      self.schema = schema
      self.layout = layout
      self.kinds = schema.fields.map(\.kind)
      allowedTags = .allocate(capacity: kinds.count)
      for (position, kind) in kinds.enumerated() {
        allowedTags[position] = 1 | RowCodec.tags(of: kind).reduce(0) { $0 | 1 << $1 }
      }
    }

    deinit { allowedTags.deallocate() }

    /// Decodes a row of this shape, checking every length and kind; throws
    /// ``RowDamage/otherLayout(_:)`` for a row of another layout.
    func decode(_ bytes: UnsafeRawBufferPointer) throws(RowDamage) -> [Value] {
      try withUnsafeTemporaryAllocation(of: Slot.self, capacity: kinds.count) { slots throws(RowDamage) in
        try self.slots(bytes, into: slots)
        var values: [Value] = []
        values.reserveCapacity(slots.count)
        for position in slots.indices {
          values.append(try RowCodec.value(slots[position], in: bytes, field: position, of: schema))
        }
        return values
      }
    }

    /// Walks a row written under this shape's layout, checking its header and every tag, length
    /// and kind, and writes each value's slot into `slots` (which has room for every field).
    /// Throws ``RowDamage/otherLayout(_:)`` for a row of another layout. A string's UTF-8 is
    /// checked where the string is made (``RowCodec/text(_:)``), when its bytes are read anyway.
    func slots(_ bytes: UnsafeRawBufferPointer, into slots: UnsafeMutableBufferPointer<Slot>)
      throws(RowDamage)
    {
      _ = try walk(bytes, into: slots, ends: nil)
    }

    /// ``slots(_:into:)``, also writing into `ends` (which has room for every field) the offset
    /// just after each value: for a rewrite that copies the values it keeps as they are stored.
    /// Returns the offset of the first value.
    func slots(
      _ bytes: UnsafeRawBufferPointer, into slots: UnsafeMutableBufferPointer<Slot>,
      ends: UnsafeMutableBufferPointer<Int>
    ) throws(RowDamage) -> Int {
      try walk(bytes, into: slots, ends: ends)
    }

    @inline(__always)
    private func walk(
      _ bytes: UnsafeRawBufferPointer, into slots: UnsafeMutableBufferPointer<Slot>,
      ends: UnsafeMutableBufferPointer<Int>?
    ) throws(RowDamage) -> Int {
      var reader = ByteReader(bytes)
      let stored = try reader.header()
      guard stored == layout else { throw .otherLayout(stored) }
      let count = try reader.length()
      guard count == kinds.count, count <= slots.count else {
        throw .malformed("it holds \(count) values but its schema has \(kinds.count) fields")
      }
      let first = reader.position
      for position in 0..<count {
        var slot = Slot()
        slot.tag = try reader.byte()
        guard slot.tag < 16, allowedTags[position] & 1 << slot.tag != 0 else {
          throw mismatch(slot.tag, position)
        }
        switch slot.tag {
        case 3, 7: slot.number = try reader.varint()
        case 4: slot.number = UInt64(littleEndian: try reader.fixed(UInt64.self))
        case 5, 6, 9:
          slot.length = try reader.length()
          slot.start = reader.position
          try reader.skip(slot.length)
        case 8:
          slot.length = 16
          slot.start = reader.position
          try reader.skip(16)
        default: break
        }
        slots[position] = slot
        ends?[position] = reader.position
      }
      guard reader.isAtEnd else { throw .malformed("it has \(reader.remaining) bytes after its last value") }
      return first
    }

    /// The error for a tag the field at `position` does not allow.
    private func mismatch(_ tag: UInt8, _ position: Int) -> RowDamage {
      let name = RowCodec.name(position, in: schema)
      guard let kind = RowCodec.kind(ofTag: tag) else {
        return .malformed("field '\(name)' has unknown value tag \(tag)")
      }
      return .malformed("field '\(name)' holds a value of kind \(kind) but is declared \(kinds[position])")
    }
  }

  /// The non-null tags a value of a kind is written with.
  static func tags(of kind: FieldKind) -> [UInt8] {
    switch kind {
    case .bool: [1, 2]
    case .int: [3]
    case .double: [4]
    case .string: [5]
    case .bytes: [6]
    case .date: [7]
    case .uuid: [8]
    case .document: [9]
    }
  }

  /// The kind a non-null tag stands for; `nil` for null and unknown tags.
  static func kind(ofTag tag: UInt8) -> FieldKind? {
    FieldKind.allCases.first { tags(of: $0).contains(tag) }
  }

  /// Where one value of a row lies, as ``Shape/slots(_:into:)`` found it.
  struct Slot: Sendable {
    /// The value's tag; 0 (null) for a slot not yet found.
    var tag: UInt8 = 0
    /// A varint as stored (tags 3 and 7), or a double's bits (tag 4).
    var number: UInt64 = 0
    /// Where the payload of a string, bytes, document or UUID starts, and its length.
    var start = 0
    var length = 0
  }

  /// The name of the field at a position, for errors.
  static func name(_ position: Int, in schema: EntitySchema) -> String {
    schema.fields.indices.contains(position) ? schema.fields[position].name : "#\(position)"
  }

  /// The value a slot of `bytes` stands for, the one at position `field` of `schema`'s fields;
  /// the slot's span and kind were checked when it was found. Throws when a string is not UTF-8.
  static func value(_ slot: Slot, in bytes: UnsafeRawBufferPointer, field: Int, of schema: EntitySchema)
    throws(RowDamage) -> Value
  {
    func payload() -> UnsafeRawBufferPointer {
      UnsafeRawBufferPointer(rebasing: bytes[slot.start..<(slot.start + slot.length)])
    }
    switch slot.tag {
    case 1: return .bool(false)
    case 2: return .bool(true)
    case 3: return .int(unzigzag(slot.number))
    case 4: return .double(Double(bitPattern: slot.number))
    case 5:
      guard let string = text(payload()) else {
        throw .malformed("field '\(name(field, in: schema))' holds a string that is not UTF-8")
      }
      return .string(string)
    case 6: return .bytes(Data(payload()))
    case 7: return .date(Value.date(microsecondsSince1970: unzigzag(slot.number)))
    case 8: return .uuid(UUID(uuid: payload().loadUnaligned(as: uuid_t.self)))
    case 9: return .document(Data(payload()))
    default: return .null
    }
  }

  /// The string a row's string payload holds, or `nil` when the bytes are not well-formed UTF-8
  /// (stray continuation bytes, overlong forms, surrogates, values above U+10FFFF, a sequence
  /// cut off at the end).
  ///
  /// The standard library makes the string in one pass, replacing every ill-formed sequence
  /// with U+FFFD. Bytes that are all ASCII are well-formed; otherwise they were well-formed
  /// exactly when the string's bytes equal them. Either check reads bytes the standard library
  /// has just brought into the cache, which costs far less than a separate validating pass
  /// over bytes read from the memory map for the first time.
  static func text(_ bytes: UnsafeRawBufferPointer) -> String? {
    var string = String(decoding: bytes, as: UTF8.self)
    if isASCII(bytes) { return string }
    let unchanged = string.withUTF8 { utf8 in
      guard utf8.count == bytes.count else { return false }
      guard let made = utf8.baseAddress, let stored = bytes.baseAddress else { return true }
      return memcmp(made, stored, bytes.count) == 0
    }
    return unchanged ? string : nil
  }

  /// Whether every byte is below 0x80, eight at a time.
  @inline(__always)
  static func isASCII(_ bytes: UnsafeRawBufferPointer) -> Bool {
    var high: UInt64 = 0
    var offset = 0
    while offset + 8 <= bytes.count {
      high |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
      offset += 8
    }
    while offset < bytes.count {
      high |= UInt64(bytes[offset])
      offset += 1
    }
    return high & 0x8080_8080_8080_8080 == 0
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
    let next = buffer[offset]
    offset += 1
    return next
  }

  mutating func varint() throws(RowDamage) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while offset < buffer.count {
      let next = buffer[offset]
      offset += 1
      guard shift < 63 || (shift == 63 && next <= 1) else { throw .malformed("a number is too long") }
      result |= UInt64(next & 0x7F) << shift
      if next & 0x80 == 0 { return result }
      shift += 7
    }
    throw .malformed("it ends early")
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

  mutating func skip(_ count: Int) throws(RowDamage) {
    guard count >= 0, count <= buffer.count - offset else { throw .malformed("it ends early") }
    offset += count
  }

  mutating func fixed<T: FixedWidthInteger>(_ type: T.Type) throws(RowDamage) -> T {
    let raw = try bytes(MemoryLayout<T>.size)
    return raw.loadUnaligned(as: T.self)
  }
}
