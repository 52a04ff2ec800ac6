import Foundation

/// The one order of stored values that every backend reproduces.
///
/// Within a kind: `false < true`; integers and doubles numerically; strings by UTF-8 bytes
/// (Unicode code-point order); bytes lexicographically as unsigned; dates chronologically
/// (microseconds); UUIDs by their 16 bytes. Null sorts before everything. Documents are ordered by
/// their bytes only so that equality is decided here too; queries may not sort or range on them.
@_spi(Backend) public enum ValueOrder {
  /// -1, 0 or 1 as `lhs` is before, tied with, or after `rhs`.
  public static func compare(_ lhs: Value, _ rhs: Value) -> Int {
    switch (lhs, rhs) {
    case (.null, .null): return 0
    case (.null, _): return -1
    case (_, .null): return 1
    case (.bool(let a), .bool(let b)): return a == b ? 0 : (a ? 1 : -1)
    case (.int(let a), .int(let b)): return a == b ? 0 : (a < b ? -1 : 1)
    case (.double(let a), .double(let b)): return a == b ? 0 : (a < b ? -1 : 1)
    case (.int(let a), .double(let b)): return compare(Double(a), b)
    case (.double(let a), .int(let b)): return compare(a, Double(b))
    case (.string(let a), .string(let b)): return compareUTF8(a, b)
    case (.bytes(let a), .bytes(let b)): return compareBytes(a, b)
    case (.date(let a), .date(let b)):
      let x = Value.microseconds(since1970: a)
      let y = Value.microseconds(since1970: b)
      return x == y ? 0 : (x < y ? -1 : 1)
    case (.uuid(let a), .uuid(let b)): return compareUUID(a, b)
    case (.document(let a), .document(let b)): return compareBytes(a, b)
    default:
      let x = rank(lhs)
      let y = rank(rhs)
      return x == y ? 0 : (x < y ? -1 : 1)
    }
  }

  private static func compare(_ a: Double, _ b: Double) -> Int { a == b ? 0 : (a < b ? -1 : 1) }

  private static func rank(_ value: Value) -> Int {
    switch value {
    case .null: 0
    case .bool: 1
    case .int, .double: 2
    case .string: 3
    case .bytes: 4
    case .date: 5
    case .uuid: 6
    case .document: 7
    }
  }

  /// Byte-wise comparison of UTF-8, which is Unicode code-point order.
  public static func compareUTF8(_ lhs: String, _ rhs: String) -> Int {
    var a = lhs
    var b = rhs
    return a.withUTF8 { x in b.withUTF8 { y in compareBuffers(x, y) } }
  }

  static func compareBytes(_ lhs: Data, _ rhs: Data) -> Int {
    lhs.withUnsafeBytes { x in rhs.withUnsafeBytes { y in compareRaw(x, y) } }
  }

  /// UUIDs by their 16 bytes: each half read as a big-endian integer, which orders as its bytes.
  static func compareUUID(_ lhs: UUID, _ rhs: UUID) -> Int {
    let (a, b) = (halves(lhs), halves(rhs))
    if a.high != b.high { return a.high < b.high ? -1 : 1 }
    return a.low == b.low ? 0 : (a.low < b.low ? -1 : 1)
  }

  private static func halves(_ uuid: UUID) -> (high: UInt64, low: UInt64) {
    withUnsafeBytes(of: uuid.uuid) { bytes in
      (
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 0, as: UInt64.self)),
        UInt64(bigEndian: bytes.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
      )
    }
  }

  static func compareBuffers(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Int {
    compareRaw(UnsafeRawBufferPointer(x), UnsafeRawBufferPointer(y))
  }

  static func compareRaw(_ x: UnsafeRawBufferPointer, _ y: UnsafeRawBufferPointer) -> Int {
    let common = min(x.count, y.count)
    if common > 0, let a = x.baseAddress, let b = y.baseAddress {
      let result = memcmp(a, b, common)
      if result != 0 { return result < 0 ? -1 : 1 }
    }
    return x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
  }
}
