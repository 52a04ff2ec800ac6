@_spi(Backend) import Coffer
import Foundation

/// Writes binary property lists (`bplist00`), handing the bytes over in pieces as they are made.
///
/// Objects are appended one at a time and referred to by number; every reference is four bytes
/// (any reader accepts a fixed size), so a row's encoded value objects can be kept and copied
/// into the next file unchanged. Offsets take four bytes, or eight past 4 GiB.
///
/// The offset table at the end of the file lists every object: for rows, several objects each,
/// the offsets are worked out again from the rows when the table is written, rather than kept
/// for the whole write (a store of a million rows has millions of objects).
struct BinaryPlistWriter {
  static let referenceSize = 4
  /// How many bytes the writer gathers before handing them over.
  static let pieceSize = 1 << 20
  /// Where the bytes go, a piece at a time, in order.
  typealias Output = (UnsafeRawBufferPointer) throws -> Void
  typealias Rows = Dictionary<Value, EncodedRow>.Values

  /// Rows appended by ``appendRows(_:fieldKeys:to:)``: their objects come after the first
  /// `precededBy` objects of ``offsets``, from `base` in the file.
  private struct RowRun {
    var precededBy: Int
    var rows: Rows
    var base: Int
  }

  /// Bytes made but not handed over yet.
  private var bytes: [UInt8] = Array("bplist00".utf8)
  /// How many bytes were handed over before ``bytes``.
  private var handedOver = 0
  /// The offsets of the objects not in a run of rows, in order.
  private var offsets: [Int] = []
  private var runs: [RowRun] = []
  /// How many objects there are so far: the number the next one gets.
  private var objectCount = 0

  /// The offset in the file of the next byte.
  var position: Int { handedOver + bytes.count }

  /// Hands the bytes made so far to `output`.
  mutating func flush(to output: Output) throws {
    guard !bytes.isEmpty else { return }
    try bytes.withUnsafeBytes(output)
    handedOver += bytes.count
    bytes.removeAll(keepingCapacity: true)
  }

  /// The bytes a row takes: its dictionary object, then its value objects.
  private static func size(of shape: EncodedRow.Shape) -> Int {
    1 + (shape.count < 15 ? 0 : 9) + 2 * referenceSize * shape.count + shape.valueBytes
  }

  /// Appends rows: for each, its dictionary object (keys from `fieldKeys`, values numbered
  /// right after it) and then its cached value objects, skipping the nulls (see ``EncodedRow``).
  /// Returns the dictionaries' numbers.
  ///
  /// The hot path of every commit: rows go in pieces of about ``pieceSize`` bytes, each sized
  /// first and stored through one pointer, with no allocation per row.
  mutating func appendRows(_ rows: Rows, fieldKeys: [Int], to output: Output) throws -> [Int] {
    try flush(to: output)
    runs.append(RowRun(precededBy: offsets.count, rows: rows, base: position))
    var numbers: [Int] = []
    numbers.reserveCapacity(rows.count)
    var start = rows.startIndex
    while start != rows.endIndex {
      var end = start
      var size = 0
      while end != rows.endIndex, size < Self.pieceSize {
        size += Self.size(of: EncodedRow.Shape(rows[end].bytes))
        rows.formIndex(after: &end)
      }
      let piece = [UInt8](unsafeUninitializedCapacity: size) { uninitialized, initialized in
        initialized = write(
          rows[start..<end], fieldKeys: fieldKeys, into: UnsafeMutableRawBufferPointer(uninitialized),
          numbers: &numbers)
      }
      try piece.withUnsafeBytes(output)
      handedOver += piece.count
      start = end
    }
    return numbers
  }

  /// Writes rows' objects into `buffer`, sized for them, and returns how many bytes they took.
  private mutating func write(
    _ rows: Rows.SubSequence, fieldKeys: [Int], into buffer: UnsafeMutableRawBufferPointer,
    numbers: inout [Int]
  ) -> Int {
    var cursor = 0
    for row in rows {
      row.bytes.withUnsafeBytes { source in
        let count = EncodedRow.Shape(row.bytes).count
        let dictionary = objectCount
        numbers.append(dictionary)
        objectCount += 1 + count
        if count < 15 {
          buffer[cursor] = 0xD0 | UInt8(count)
          cursor += 1
        } else {
          buffer[cursor] = 0xDF
          buffer[cursor + 1] = 0x13
          buffer.storeBytes(of: UInt64(count).bigEndian, toByteOffset: cursor + 2, as: UInt64.self)
          cursor += 10
        }
        // The keys' references, then the values', then the value objects themselves.
        let valueReferences = cursor + count * Self.referenceSize
        var objectStart = valueReferences + count * Self.referenceSize
        var number = 0
        EncodedRow.forEachValue(in: source) { field, offset, length in
          buffer.storeBytes(
            of: UInt32(fieldKeys[field]).bigEndian, toByteOffset: cursor + number * Self.referenceSize,
            as: UInt32.self)
          buffer.storeBytes(
            of: UInt32(dictionary + 1 + number).bigEndian,
            toByteOffset: valueReferences + number * Self.referenceSize, as: UInt32.self)
          if let from = source.baseAddress, let to = buffer.baseAddress {
            (to + objectStart).copyMemory(from: from + offset, byteCount: length)
          }
          objectStart += length
          number += 1
        }
        cursor = objectStart
      }
    }
    return cursor
  }

  /// Appends an object already encoded (see ``BinaryPlistObjects``) and returns its number.
  @discardableResult
  mutating func appendObject(_ encoded: [UInt8]) -> Int {
    offsets.append(position)
    bytes.append(contentsOf: encoded)
    objectCount += 1
    return objectCount - 1
  }

  /// Appends the offset table and trailer, handing everything left to `output`; `top` is the root
  /// object's number.
  mutating func finish(top: Int, to output: Output) throws {
    try flush(to: output)
    let tableOffset = position
    let offsetSize = tableOffset <= Int(UInt32.max) ? 4 : 8
    var table = OffsetTable(offsetSize: offsetSize)
    var listed = 0
    for run in runs {
      try table.append(offsets[listed..<run.precededBy], to: output)
      listed = run.precededBy
      // The offsets `write(_:fieldKeys:into:numbers:)` gave the run's objects, worked out again.
      var cursor = run.base
      for row in run.rows {
        try row.bytes.withUnsafeBytes { source in
          let shape = EncodedRow.Shape(row.bytes)
          try table.append(cursor, to: output)
          var objectStart = cursor + Self.size(of: shape) - shape.valueBytes
          try EncodedRow.forEachValue(in: source) { _, _, length in
            try table.append(objectStart, to: output)
            objectStart += length
          }
          cursor = objectStart
        }
      }
    }
    try table.append(offsets[listed...], to: output)
    try table.flush(to: output)
    handedOver += table.written
    bytes.append(contentsOf: [0, 0, 0, 0, 0, 0])
    bytes.append(UInt8(offsetSize))
    bytes.append(UInt8(Self.referenceSize))
    BinaryPlistObjects.appendBigEndian(UInt64(objectCount), size: 8, to: &bytes)
    BinaryPlistObjects.appendBigEndian(UInt64(top), size: 8, to: &bytes)
    BinaryPlistObjects.appendBigEndian(UInt64(tableOffset), size: 8, to: &bytes)
    try flush(to: output)
  }

  /// The offset table, made and handed over a piece at a time.
  private struct OffsetTable {
    let offsetSize: Int
    var piece: [UInt8] = []
    var written = 0

    init(offsetSize: Int) {
      self.offsetSize = offsetSize
      piece.reserveCapacity(BinaryPlistWriter.pieceSize)
    }

    mutating func append(_ offset: Int, to output: Output) throws {
      if offsetSize == 4 {
        withUnsafeBytes(of: UInt32(offset).bigEndian) { piece.append(contentsOf: $0) }
      } else {
        withUnsafeBytes(of: UInt64(offset).bigEndian) { piece.append(contentsOf: $0) }
      }
      if piece.count >= BinaryPlistWriter.pieceSize { try flush(to: output) }
    }

    mutating func append(_ offsets: ArraySlice<Int>, to output: Output) throws {
      for offset in offsets { try append(offset, to: output) }
    }

    mutating func flush(to output: Output) throws {
      guard !piece.isEmpty else { return }
      try piece.withUnsafeBytes(output)
      written += piece.count
      piece.removeAll(keepingCapacity: true)
    }
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
