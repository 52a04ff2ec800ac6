import Foundation

/// The payload written straight into memory of the size it needs, measured first: what
/// ``ChangeCollector/encoded(after:)`` does with a bulk batch's hundreds of thousands of values,
/// each then a store or two rather than an append that checks the array's room and ownership.
/// It writes the same bytes as ``ChangePayload/Writer``.
extension ChangePayload {
  /// How many bytes ``Writer/count(_:)`` writes for `count`.
  static func size(ofCount count: Int) -> Int {
    var rest = UInt64(count)
    var size = 1
    while rest >= 0x80 {
      size += 1
      rest >>= 7
    }
    return size
  }

  /// How many bytes ``Writer/string(_:)`` writes for `text`.
  static func size(of text: String) -> Int {
    let length = text.utf8.count
    return size(ofCount: length) + length
  }

  /// How many bytes ``Writer/value(_:)`` writes for `value`.
  static func size(of value: Value) -> Int {
    switch value {
    case .null, .bool: 1
    case .int, .double, .date: 9
    case .string(let text): 1 + size(of: text)
    case .bytes(let data), .document(let data): 1 + size(ofCount: data.count) + data.count
    case .uuid: 17
    }
  }

  /// Writes at `cursor`, which moves past what is written, into memory made large enough with
  /// the `size` functions.
  struct BufferWriter: ChangePayloadSink {
    var cursor: UnsafeMutableRawPointer

    mutating func byte(_ byte: UInt8) {
      cursor.storeBytes(of: byte, as: UInt8.self)
      cursor += 1
    }

    mutating func fixed(_ bits: UInt64) {
      cursor.storeBytes(of: bits.littleEndian, as: UInt64.self)
      cursor += 8
    }

    mutating func raw(_ bytes: UnsafeRawBufferPointer) {
      guard let base = bytes.baseAddress, !bytes.isEmpty else { return }
      cursor.copyMemory(from: base, byteCount: bytes.count)
      cursor += bytes.count
    }
  }
}
