/// A check that stored bytes are well-formed UTF-8, for decoding strings from rows.
///
/// The standard library's validating `String` initializers are generic over the encoding and,
/// unspecialized, looked up type metadata for every string a scan read; this is one plain
/// loop, eight bytes at a time while the text is ASCII.
enum UTF8Validation {
  /// Whether `bytes` are well-formed UTF-8: no stray continuation bytes, no overlong forms, no
  /// surrogates, nothing above U+10FFFF, no sequence cut off at the end.
  static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
    let count = bytes.count
    var index = 0
    while index < count {
      if index + 8 <= count,
        bytes.loadUnaligned(fromByteOffset: index, as: UInt64.self) & 0x8080_8080_8080_8080 == 0
      {
        index += 8
        continue
      }
      let lead = bytes[index]
      if lead < 0x80 {
        index += 1
        continue
      }
      guard let length = sequenceLength(lead), index + length <= count else { return false }
      let second = bytes[index + 1]
      guard second & 0xC0 == 0x80 else { return false }
      switch lead {
      case 0xE0: guard second >= 0xA0 else { return false }  // overlong
      case 0xED: guard second < 0xA0 else { return false }  // surrogate
      case 0xF0: guard second >= 0x90 else { return false }  // overlong
      case 0xF4: guard second < 0x90 else { return false }  // above U+10FFFF
      default: break
      }
      for offset in 2..<length where bytes[index + offset] & 0xC0 != 0x80 { return false }
      index += length
    }
    return true
  }

  /// The length of the sequence a non-ASCII lead byte starts, or `nil` for a byte that cannot
  /// lead one.
  private static func sequenceLength(_ lead: UInt8) -> Int? {
    switch lead {
    case 0xC2...0xDF: 2
    case 0xE0...0xEF: 3
    case 0xF0...0xF4: 4
    default: nil
    }
  }
}
