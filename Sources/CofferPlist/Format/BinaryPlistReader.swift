import Foundation

/// Parses binary property lists (`bplist00`) into ``PlistValue``s.
///
/// Every length, offset and reference read from the file is checked against the file before it
/// is used, object references may not form cycles, and nesting is bounded: a damaged file is a
/// ``PlistSyntaxError``, never a crash.
struct BinaryPlistReader {
  let bytes: [UInt8]
  private let offsetSize: Int
  let referenceSize: Int
  let objectCount: Int
  let top: Int
  private let tableOffset: Int
  private static let maximumDepth = 256

  static func isBinary(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array("bplist".utf8)) }

  static func parse(_ data: Data) throws -> PlistValue {
    let reader = try BinaryPlistReader([UInt8](data))
    var visiting = Set<Int>()
    return try reader.object(reader.top, depth: 0, visiting: &visiting)
  }

  init(_ bytes: [UInt8]) throws {
    self.bytes = bytes
    guard bytes.count >= 8 + 32, bytes.starts(with: Array("bplist0".utf8)) else {
      throw PlistSyntaxError(offset: 0, reason: "too short to be a binary property list")
    }
    let trailer = bytes.count - 32
    offsetSize = Int(bytes[trailer + 6])
    referenceSize = Int(bytes[trailer + 7])
    let count = Self.readUInt(bytes, at: trailer + 8, size: 8)
    let topObject = Self.readUInt(bytes, at: trailer + 16, size: 8)
    let table = Self.readUInt(bytes, at: trailer + 24, size: 8)
    guard (1...8).contains(offsetSize), (1...8).contains(referenceSize) else {
      throw PlistSyntaxError(offset: trailer, reason: "invalid offset or reference size in the trailer")
    }
    guard count > 0, count < UInt64(bytes.count), topObject < count, table >= 8, table < UInt64(trailer),
      UInt64(trailer) - table >= count * UInt64(offsetSize)
    else {
      throw PlistSyntaxError(
        offset: trailer, reason: "the trailer does not describe this file (truncated or damaged)")
    }
    objectCount = Int(count)
    top = Int(topObject)
    tableOffset = Int(table)
  }

  /// The big-endian unsigned integer of `size` bytes at `position`.
  @inline(__always)
  static func readUInt(_ bytes: [UInt8], at position: Int, size: Int) -> UInt64 {
    if position >= 0, position <= bytes.count - 8 {
      // Eight bytes are there to load at once: keep the first `size` of them.
      let word = bytes.withUnsafeBytes {
        UInt64(bigEndian: $0.loadUnaligned(fromByteOffset: position, as: UInt64.self))
      }
      switch size {
      case 1...7: return word >> (64 - 8 * UInt64(size))
      case 8: return word
      default: break
      }
    }
    var value: UInt64 = 0
    for offset in 0..<size { value = value << 8 | UInt64(bytes[position + offset]) }
    return value
  }

  /// Fails unless `size` bytes at `position` lie in the object area.
  @inline(__always)
  func check(at position: Int, size: Int) throws {
    guard position >= 0, size >= 0, position <= tableOffset - size else {
      throw PlistSyntaxError(offset: position, reason: "an object runs past the object area")
    }
  }

  func read(at position: Int, size: Int) throws -> UInt64 {
    try check(at: position, size: size)
    return Self.readUInt(bytes, at: position, size: size)
  }

  func offset(of object: Int) throws -> Int {
    guard object >= 0, object < objectCount else {
      throw PlistSyntaxError(offset: tableOffset, reason: "reference to object \(object) of \(objectCount)")
    }
    let value = Self.readUInt(bytes, at: tableOffset + object * offsetSize, size: offsetSize)
    guard value >= 8, value < UInt64(tableOffset) else {
      throw PlistSyntaxError(offset: tableOffset, reason: "object \(object) has an offset outside the file")
    }
    return Int(value)
  }

  /// The count in a marker's low nibble, or the integer object after it, and where content starts.
  func length(_ marker: UInt8, at position: Int) throws -> (count: Int, start: Int) {
    let nibble = Int(marker & 0x0F)
    if nibble < 15 { return (nibble, position + 1) }
    let intMarker = try read(at: position + 1, size: 1)
    guard intMarker & 0xF0 == 0x10 else {
      throw PlistSyntaxError(offset: position, reason: "bad length marker")
    }
    let size = 1 << Int(intMarker & 0x0F)
    guard size <= 8 else { throw PlistSyntaxError(offset: position, reason: "bad length size") }
    let count = try read(at: position + 2, size: size)
    guard count < UInt64(tableOffset) else {
      throw PlistSyntaxError(offset: position, reason: "length past the file")
    }
    return (Int(count), position + 2 + size)
  }

  func object(_ number: Int, depth: Int, visiting: inout Set<Int>) throws -> PlistValue {
    guard depth < Self.maximumDepth else { throw PlistSyntaxError(offset: 0, reason: "nesting too deep") }
    let position = try offset(of: number)
    let marker = UInt8(try read(at: position, size: 1))
    switch marker >> 4 {
    case 0x0:
      switch marker {
      case 0x08: return .bool(false)
      case 0x09: return .bool(true)
      default:
        throw PlistSyntaxError(
          offset: position, reason: "unsupported simple object 0x\(String(marker, radix: 16))")
      }
    case 0x1:
      let size = 1 << Int(marker & 0x0F)
      guard size <= 8 else {
        throw PlistSyntaxError(offset: position, reason: "integers over 8 bytes are not supported")
      }
      let raw = try read(at: position + 1, size: size)
      return .integer(size == 8 ? Int64(bitPattern: raw) : Int64(raw))
    case 0x2:
      switch marker & 0x0F {
      case 2: return .real(Double(Float(bitPattern: UInt32(try read(at: position + 1, size: 4)))))
      case 3: return .real(Double(bitPattern: try read(at: position + 1, size: 8)))
      default: throw PlistSyntaxError(offset: position, reason: "bad real size")
      }
    case 0x3:
      return .date(
        Date(timeIntervalSinceReferenceDate: Double(bitPattern: try read(at: position + 1, size: 8))))
    case 0x4:
      let (count, start) = try length(marker, at: position)
      try check(at: start, size: count)
      return .data(Data(bytes[start..<(start + count)]))
    case 0x5:
      let (count, start) = try length(marker, at: position)
      try check(at: start, size: count)
      return .string(String(decoding: bytes[start..<(start + count)], as: UTF8.self))
    case 0x6:
      let (count, start) = try length(marker, at: position)
      try check(at: start, size: count * 2)
      var units: [UInt16] = []
      units.reserveCapacity(count)
      for index in 0..<count {
        units.append(UInt16(bytes[start + 2 * index]) << 8 | UInt16(bytes[start + 2 * index + 1]))
      }
      return .string(String(decoding: units, as: UTF16.self))
    case 0xA, 0xD:
      let (count, start) = try length(marker, at: position)
      let isDict = marker >> 4 == 0xD
      let referenceCount = isDict ? count * 2 : count
      try check(at: start, size: referenceCount * referenceSize)
      guard visiting.insert(number).inserted else {
        throw PlistSyntaxError(offset: position, reason: "object cycle")
      }
      defer { visiting.remove(number) }
      var children: [PlistValue] = []
      children.reserveCapacity(referenceCount)
      for index in 0..<referenceCount {
        let reference = Int(Self.readUInt(bytes, at: start + index * referenceSize, size: referenceSize))
        children.append(try object(reference, depth: depth + 1, visiting: &visiting))
      }
      guard isDict else { return .array(children) }
      var entries: [(key: String, value: PlistValue)] = []
      entries.reserveCapacity(count)
      for index in 0..<count {
        guard case .string(let key) = children[index] else {
          throw PlistSyntaxError(offset: position, reason: "a dictionary key is not a string")
        }
        entries.append((key, children[count + index]))
      }
      return .dict(entries)
    default:
      throw PlistSyntaxError(
        offset: position, reason: "unsupported object type 0x\(String(marker, radix: 16))")
    }
  }
}
