import Foundation

/// Writes binary property lists (`bplist00`).
///
/// Objects are appended one at a time and referred to by number; every reference is four bytes
/// (any reader accepts a fixed size), so a row's encoded value objects can be kept and copied
/// into the next file unchanged. Offsets take four bytes, or eight past 4 GiB.
struct BinaryPlistWriter {
  static let referenceSize = 4
  private(set) var bytes: [UInt8] = Array("bplist00".utf8)
  private(set) var offsets: [Int] = []

  /// Appends rows: for each, its dictionary object (keys from `fieldKeys`, values numbered
  /// right after it) and then its cached value objects. Returns the dictionaries' numbers.
  ///
  /// The hot path of every commit: sizes are computed first and bytes are stored through one
  /// pointer, with no allocation per row.
  mutating func appendRows(_ rows: some Collection<EncodedRow>, fieldKeys: [Int]) -> [Int] {
    // No rows, no region: an array made with zero capacity is the shared empty array, whose count
    // the initializer would write from several threads at once (a race ThreadSanitizer reports).
    if rows.isEmpty { return [] }
    var size = 0
    var objects = 0
    for row in rows {
      size +=
        1 + (row.fields.count < 15 ? 0 : 9) + 2 * Self.referenceSize * row.fields.count + row.bytes.count
      objects += 1 + row.fields.count
    }
    var numbers: [Int] = []
    numbers.reserveCapacity(rows.count)
    let base = bytes.count
    offsets.reserveCapacity(offsets.count + objects)
    let region = [UInt8](unsafeUninitializedCapacity: size) { uninitialized, initialized in
      let buffer = UnsafeMutableRawBufferPointer(uninitialized)
      var position = 0
      for row in rows {
        let dictionary = offsets.count
        numbers.append(dictionary)
        offsets.append(base + position)
        let count = row.fields.count
        if count < 15 {
          buffer[position] = 0xD0 | UInt8(count)
          position += 1
        } else {
          buffer[position] = 0xDF
          buffer[position + 1] = 0x13
          buffer.storeBytes(of: UInt64(count).bigEndian, toByteOffset: position + 2, as: UInt64.self)
          position += 10
        }
        for field in row.fields {
          buffer.storeBytes(
            of: UInt32(fieldKeys[Int(field)]).bigEndian, toByteOffset: position, as: UInt32.self)
          position += 4
        }
        for index in 0..<count {
          buffer.storeBytes(
            of: UInt32(dictionary + 1 + index).bigEndian, toByteOffset: position, as: UInt32.self)
          position += 4
        }
        var objectStart = base + position
        for length in row.lengths {
          offsets.append(objectStart)
          objectStart += Int(length)
        }
        row.bytes.withUnsafeBytes { source in
          if let from = source.baseAddress, let to = buffer.baseAddress {
            (to + position).copyMemory(from: from, byteCount: source.count)
          }
        }
        position += row.bytes.count
      }
      initialized = position
    }
    bytes.append(contentsOf: region)
    return numbers
  }

  /// Appends an object already encoded (see ``BinaryPlistObjects``) and returns its number.
  @discardableResult
  mutating func appendObject(_ encoded: [UInt8]) -> Int {
    offsets.append(bytes.count)
    bytes.append(contentsOf: encoded)
    return offsets.count - 1
  }

  /// Appends the offset table and trailer; `top` is the root object's number.
  mutating func finish(top: Int) -> [UInt8] {
    let tableOffset = bytes.count
    let offsetSize = tableOffset <= Int(UInt32.max) ? 4 : 8
    let table = [UInt8](unsafeUninitializedCapacity: offsets.count * offsetSize) {
      uninitialized, initialized in
      let buffer = UnsafeMutableRawBufferPointer(uninitialized)
      var position = 0
      for offset in offsets {
        if offsetSize == 4 {
          buffer.storeBytes(of: UInt32(offset).bigEndian, toByteOffset: position, as: UInt32.self)
        } else {
          buffer.storeBytes(of: UInt64(offset).bigEndian, toByteOffset: position, as: UInt64.self)
        }
        position += offsetSize
      }
      initialized = position
    }
    bytes.append(contentsOf: table)
    bytes.append(contentsOf: [0, 0, 0, 0, 0, 0])
    bytes.append(UInt8(offsetSize))
    bytes.append(UInt8(Self.referenceSize))
    BinaryPlistObjects.appendBigEndian(UInt64(offsets.count), size: 8, to: &bytes)
    BinaryPlistObjects.appendBigEndian(UInt64(top), size: 8, to: &bytes)
    BinaryPlistObjects.appendBigEndian(UInt64(tableOffset), size: 8, to: &bytes)
    return bytes
  }

  /// Appends a whole value tree, children first, and returns the number of its root.
  mutating func append(_ value: PlistValue) -> Int {
    switch value {
    case .dict(let entries):
      let keys = entries.map { appendObject(BinaryPlistObjects.string($0.key)) }
      let values = entries.map { append($0.value) }
      return appendObject(
        BinaryPlistObjects.container(marker: 0xD0, count: entries.count, references: keys + values))
    case .array(let items):
      let references = items.map { append($0) }
      return appendObject(
        BinaryPlistObjects.container(marker: 0xA0, count: items.count, references: references))
    default:
      return appendObject(BinaryPlistObjects.scalar(value))
    }
  }
}

/// Encodings of single binary-plist objects.
enum BinaryPlistObjects {
  static func appendBigEndian(_ value: UInt64, size: Int, to bytes: inout [UInt8]) {
    for shift in stride(from: (size - 1) * 8, through: 0, by: -8) {
      bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift)))
    }
  }

  static func markerWithLength(_ marker: UInt8, _ count: Int, to bytes: inout [UInt8]) {
    if count < 15 {
      bytes.append(marker | UInt8(count))
    } else {
      bytes.append(marker | 0x0F)
      appendInteger(Int64(count), to: &bytes)
    }
  }

  static func appendInteger(_ value: Int64, to bytes: inout [UInt8]) {
    switch value {
    case 0...0xFF:
      bytes.append(0x10)
      bytes.append(UInt8(value))
    case 0...0xFFFF:
      bytes.append(0x11)
      appendBigEndian(UInt64(value), size: 2, to: &bytes)
    case 0...0xFFFF_FFFF:
      bytes.append(0x12)
      appendBigEndian(UInt64(value), size: 4, to: &bytes)
    default:
      bytes.append(0x13)
      appendBigEndian(UInt64(bitPattern: value), size: 8, to: &bytes)
    }
  }

  static func string(_ text: String) -> [UInt8] {
    var bytes: [UInt8] = []
    appendString(text, to: &bytes)
    return bytes
  }

  static func appendString(_ text: String, to bytes: inout [UInt8]) {
    if text.utf8.allSatisfy({ $0 < 0x80 }) {
      markerWithLength(0x50, text.utf8.count, to: &bytes)
      bytes.append(contentsOf: text.utf8)
    } else {
      let units = Array(text.utf16)
      markerWithLength(0x60, units.count, to: &bytes)
      for unit in units {
        bytes.append(UInt8(unit >> 8))
        bytes.append(UInt8(unit & 0xFF))
      }
    }
  }

  static func appendScalar(_ value: PlistValue, to bytes: inout [UInt8]) {
    switch value {
    case .bool(let flag): bytes.append(flag ? 0x09 : 0x08)
    case .integer(let number): appendInteger(number, to: &bytes)
    case .real(let number):
      bytes.append(0x23)
      appendBigEndian(number.bitPattern, size: 8, to: &bytes)
    case .date(let date):
      bytes.append(0x33)
      appendBigEndian(date.timeIntervalSinceReferenceDate.bitPattern, size: 8, to: &bytes)
    case .data(let data):
      markerWithLength(0x40, data.count, to: &bytes)
      bytes.append(contentsOf: data)
    case .string(let text): appendString(text, to: &bytes)
    case .dict, .array: break
    }
  }

  static func scalar(_ value: PlistValue) -> [UInt8] {
    var bytes: [UInt8] = []
    appendScalar(value, to: &bytes)
    return bytes
  }

  static func container(marker: UInt8, count: Int, references: [Int]) -> [UInt8] {
    var bytes: [UInt8] = []
    markerWithLength(marker, count, to: &bytes)
    for reference in references {
      appendBigEndian(UInt64(reference), size: BinaryPlistWriter.referenceSize, to: &bytes)
    }
    return bytes
  }
}
