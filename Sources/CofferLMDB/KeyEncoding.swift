@_spi(Backend) import Coffer
import Foundation

/// The order-preserving byte encoding of values used for LMDB keys: comparing two encodings
/// byte by byte (shorter first on a tie, liblmdb's default order) gives the order of
/// ``ValueOrder`` for values of one kind.
///
/// - bool: one byte, 0 or 1.
/// - int, and date as microseconds since 1970: 8 bytes big-endian with the sign bit flipped.
/// - double: 8 bytes big-endian of the IEEE bits, all bits flipped when negative, else the sign
///   bit set; -0.0 is written as +0.0 so the two are one key.
/// - string (UTF-8) and bytes: each 0x00 written as 0x00 0xFF, then the terminator 0x00 0x01.
/// - uuid: its 16 bytes.
///
/// An id key is the id's encoding alone. An index key is one component per indexed field: 0x00
/// for null, or 0x01 followed by the value's encoding.
enum KeyEncoding {
  static func append(_ value: Value, to key: inout [UInt8]) {
    switch value {
    case .null: break
    case .bool(let flag): key.append(flag ? 1 : 0)
    case .int(let number): appendOrdered(number, to: &key)
    case .double(let number):
      let bits = (number == 0 ? 0.0 : number).bitPattern
      appendBigEndian(bits & (1 << 63) != 0 ? ~bits : bits | (1 << 63), to: &key)
    case .string(var text): text.withUTF8 { appendEscaped(UnsafeRawBufferPointer($0), to: &key) }
    case .bytes(let data), .document(let data): data.withUnsafeBytes { appendEscaped($0, to: &key) }
    case .date(let date): appendOrdered(Value.microseconds(since1970: date), to: &key)
    case .uuid(let uuid): withUnsafeBytes(of: uuid.uuid) { key.append(contentsOf: $0) }
    }
  }

  /// The key of an id.
  static func idKey(_ id: Value) -> [UInt8] {
    var key: [UInt8] = []
    key.reserveCapacity(24)
    append(id, to: &key)
    return key
  }

  /// Runs `body` with the key of an id, built on the stack for integer and UUID ids.
  static func withIDKey<R>(_ id: Value, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
    switch id {
    case .int(let number):
      return try withUnsafeBytes(of: (UInt64(bitPattern: number) ^ (1 << 63)).bigEndian, body)
    case .uuid(let uuid):
      return try withUnsafeBytes(of: uuid.uuid, body)
    default:
      return try idKey(id).withUnsafeBytes(body)
    }
  }

  /// Appends one index component: 0x00 for null, else 0x01 and the encoding.
  static func appendComponent(_ value: Value, to key: inout [UInt8]) {
    if value.isNull {
      key.append(0)
    } else {
      key.append(1)
      append(value, to: &key)
    }
  }

  /// Appends the start of a string's encoding, without its terminator: every string with this
  /// prefix has an encoding that starts with these bytes.
  static func appendPrefix(_ text: String, to key: inout [UInt8]) {
    var text = text
    text.withUTF8 { bytes in
      for byte in bytes {
        key.append(byte)
        if byte == 0 { key.append(0xFF) }
      }
    }
  }

  /// The smallest byte string greater than every string that starts with `prefix`, or `nil`
  /// when there is none (the prefix is all 0xFF).
  static func successor(of prefix: [UInt8]) -> [UInt8]? {
    var bytes = prefix
    while let last = bytes.last {
      if last < 0xFF {
        bytes[bytes.count - 1] = last + 1
        return bytes
      }
      bytes.removeLast()
    }
    return nil
  }

  /// The id an id key encodes, for a field of `kind`; `nil` when the bytes are not one.
  static func decodeID(_ key: UnsafeRawBufferPointer, kind: FieldKind) -> Value? {
    switch kind {
    case .int:
      guard key.count == 8 else { return nil }
      return .int(Int64(bitPattern: readBigEndian(key) ^ (1 << 63)))
    case .uuid:
      guard key.count == 16 else { return nil }
      return .uuid(UUID(uuid: key.loadUnaligned(as: uuid_t.self)))
    case .string:
      var bytes: [UInt8] = []
      bytes.reserveCapacity(key.count)
      var index = 0
      while index < key.count {
        let byte = key[index]
        if byte == 0 {
          guard index + 1 < key.count else { return nil }
          if key[index + 1] == 1 {
            guard index + 2 == key.count else { return nil }
            return String(validating: bytes, as: UTF8.self).map(Value.string)
          }
          guard key[index + 1] == 0xFF else { return nil }
          index += 1
        }
        bytes.append(byte)
        index += 1
      }
      return nil
    default:
      return nil
    }
  }

  private static func appendOrdered(_ number: Int64, to key: inout [UInt8]) {
    appendBigEndian(UInt64(bitPattern: number) ^ (1 << 63), to: &key)
  }

  private static func appendBigEndian(_ bits: UInt64, to key: inout [UInt8]) {
    withUnsafeBytes(of: bits.bigEndian) { key.append(contentsOf: $0) }
  }

  private static func readBigEndian(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
    var bits: UInt64 = 0
    for byte in bytes.prefix(8) { bits = bits << 8 | UInt64(byte) }
    return bits
  }

  private static func appendEscaped(_ bytes: UnsafeRawBufferPointer, to key: inout [UInt8]) {
    key.reserveCapacity(key.count + bytes.count + 2)
    for byte in bytes {
      key.append(byte)
      if byte == 0 { key.append(0xFF) }
    }
    key.append(0)
    key.append(1)
  }
}
