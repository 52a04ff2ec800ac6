import Foundation
import NIOCore

/// Strings as PostgreSQL `text`, which cannot hold U+0000.
///
/// A string is stored as its UTF-8 bytes, except that U+0000 becomes U+0001 U+0001 and U+0001
/// becomes U+0001 U+0002. Every other string, which is nearly all of them, is stored exactly
/// as it is, so `psql` shows it as the app wrote it. The code keeps what the suite pins:
///
/// - it is one-to-one, so equality and unique indexes hold;
/// - it keeps code-point order under `COLLATE "C"` (byte order): U+0000 (01 01) < U+0001
///   (01 02) < U+0002 (02), and no code word is a prefix of another;
/// - a prefix test on the stored text is exact; a contains or suffix test on it may match
///   across the middle of an escape, so the SQL adds an exact check for the rare stored text
///   that holds U+0001 (see ``PostgresDialect``).
enum PostgresText {
  /// Whether the UTF-8 of a string needs escaping (holds a 0x00 or 0x01 byte).
  @inline(__always)
  static func needsEscaping(_ bytes: some Sequence<UInt8>) -> Bool {
    bytes.contains { $0 <= 1 }
  }

  /// The stored form of a string's UTF-8.
  static func escaped(_ text: String) -> String {
    let utf8 = text.utf8
    if !needsEscaping(utf8) { return text }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(utf8.count + 8)
    for byte in utf8 {
      switch byte {
      case 0: bytes.append(contentsOf: [1, 1])
      case 1: bytes.append(contentsOf: [1, 2])
      default: bytes.append(byte)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// Writes the stored form of a string.
  static func write(_ text: String, into buffer: inout ByteBuffer) {
    var text = text
    let done = text.withUTF8 { bytes -> Bool in
      guard !needsEscaping(bytes) else { return false }
      buffer.writeBytes(bytes)
      return true
    }
    if !done { writeEscaping(text.utf8, into: &buffer) }
  }

  /// Writes the stored form of a document's bytes (canonical JSON escapes control characters,
  /// so this rarely has anything to escape).
  static func write(_ data: Data, into buffer: inout ByteBuffer) {
    if needsEscaping(data) {
      writeEscaping(data, into: &buffer)
    } else {
      buffer.writeBytes(data)
    }
  }

  private static func writeEscaping(_ bytes: some Sequence<UInt8>, into buffer: inout ByteBuffer) {
    for byte in bytes {
      switch byte {
      case 0: buffer.writeBytes([1, 1] as [UInt8])
      case 1: buffer.writeBytes([1, 2] as [UInt8])
      default: buffer.writeInteger(byte)
      }
    }
  }

  /// The string stored as `bytes`.
  static func string(_ bytes: ByteBuffer) -> String {
    bytes.withUnsafeReadableBytes { raw in
      if !raw.contains(1) { return String(decoding: raw, as: UTF8.self) }
      return String(decoding: unescaped(raw), as: UTF8.self)
    }
  }

  /// The document stored as `bytes`.
  static func data(_ bytes: ByteBuffer) -> Data {
    bytes.withUnsafeReadableBytes { raw in
      raw.contains(1) ? Data(unescaped(raw)) : Data(raw)
    }
  }

  private static func unescaped(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(raw.count)
    var index = 0
    while index < raw.count {
      let byte = raw[index]
      if byte == 1, index + 1 < raw.count {
        bytes.append(raw[index + 1] == 1 ? 0 : 1)
        index += 2
      } else {
        bytes.append(byte)
        index += 1
      }
    }
    return bytes
  }

  /// An ARE regular expression that matches stored text holding `pattern` (in stored form) at a
  /// character boundary: `^(?:[^\x01]|\x01.)*?` and then the pattern, each of its characters
  /// written as `\uXXXX`/`\UXXXXXXXX` so that nothing in it is special.
  static func boundaryRegex(_ pattern: String, atEnd: Bool) -> String {
    var regex = #"^(?:[^\u0001]|\u0001.)*?"#
    for scalar in escaped(pattern).unicodeScalars {
      regex +=
        scalar.value <= 0xFFFF
        ? "\\u" + hex(scalar.value, digits: 4) : "\\U" + hex(scalar.value, digits: 8)
    }
    if atEnd { regex += "$" }
    return regex
  }

  private static func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
  }
}
