/// The package's one reader of JSON's tokens, for the hand-written parsers that read what
/// Coffer writes often (an export's lines, rows over the wire) faster than `JSONDecoder`:
/// white space, punctuation, literals, numbers and strings, by JSON's grammar exactly.
///
/// A problem throws ``Malformed``, whose message says what is wrong in words a person can act on
/// and never holds the text that was read.
package struct JSONScanner {
  package let bytes: [UInt8]
  package var position = 0

  /// What is wrong with the JSON, without any of its text.
  package struct Malformed: Error {
    package let message: String
  }

  package init(_ bytes: [UInt8]) { self.bytes = bytes }

  /// Whether every byte has been read.
  package var isAtEnd: Bool { position == bytes.count }

  /// The next byte, not consumed; `nil` at the end.
  package func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

  /// Skips JSON's white space.
  package mutating func skipSpace() {
    while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A { position += 1 }
  }

  /// Consumes `byte`, or throws.
  package mutating func expect(_ byte: UInt8) throws {
    guard peek() == byte else {
      throw Malformed(
        message: "Expected `\(Character(Unicode.Scalar(byte)))` where the JSON has something else.")
    }
    position += 1
  }

  /// Consumes `literal` when the text continues with it.
  package mutating func consume(_ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    guard position + count <= bytes.count else { return false }
    let matches = literal.withUTF8Buffer { expected in
      bytes[position..<position + count].elementsEqual(expected)
    }
    if matches { position += count }
    return matches
  }

  /// The text of a JSON number, or `nil` (nothing consumed) when none starts here.
  package mutating func number() -> String? {
    let start = position
    if peek() == UInt8(ascii: "-") { position += 1 }
    let digitsStart = position
    while let byte = peek(), Self.isDigit(byte) { position += 1 }
    guard position > digitsStart else {
      position = start
      return nil
    }
    if bytes[digitsStart] == UInt8(ascii: "0"), position - digitsStart > 1 {
      position = start
      return nil
    }
    if peek() == UInt8(ascii: ".") {
      position += 1
      let fraction = position
      while let byte = peek(), Self.isDigit(byte) { position += 1 }
      guard position > fraction else {
        position = start
        return nil
      }
    }
    if let byte = peek(), byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E") {
      position += 1
      if let sign = peek(), sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { position += 1 }
      let exponent = position
      while let byte = peek(), Self.isDigit(byte) { position += 1 }
      guard position > exponent else {
        position = start
        return nil
      }
    }
    return String(decoding: bytes[start..<position], as: UTF8.self)
  }

  /// A JSON string, unescaped; its bytes must be valid UTF-8.
  package mutating func string() throws -> String {
    try expect(UInt8(ascii: "\""))
    // Most strings have no escape: they are read straight from the bytes.
    let start = position
    while let byte = peek(), byte != UInt8(ascii: "\""), byte != UInt8(ascii: "\\"), byte >= 0x20 {
      position += 1
    }
    if peek() == UInt8(ascii: "\"") {
      defer { position += 1 }
      return try Self.text(bytes[start..<position])
    }
    var text = Array(bytes[start..<position])
    while true {
      guard let byte = peek() else {
        throw Malformed(message: "A string is not closed before the JSON ends.")
      }
      position += 1
      switch byte {
      case UInt8(ascii: "\""):
        return try Self.text(text[...])
      case UInt8(ascii: "\\"):
        try unescape(into: &text)
      case 0..<0x20:
        throw Malformed(message: "A string holds a control character that JSON requires to be escaped.")
      default:
        text.append(byte)
      }
    }
  }

  private static func text(_ utf8: ArraySlice<UInt8>) throws -> String {
    guard let string = String(validating: utf8, as: UTF8.self) else {
      throw Malformed(message: "A string is not valid UTF-8.")
    }
    return string
  }

  /// One escape after its backslash.
  private mutating func unescape(into text: inout [UInt8]) throws {
    guard let byte = peek() else { throw Malformed(message: "A string ends in a backslash.") }
    position += 1
    switch byte {
    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): text.append(byte)
    case UInt8(ascii: "b"): text.append(0x08)
    case UInt8(ascii: "f"): text.append(0x0C)
    case UInt8(ascii: "n"): text.append(0x0A)
    case UInt8(ascii: "r"): text.append(0x0D)
    case UInt8(ascii: "t"): text.append(0x09)
    case UInt8(ascii: "u"):
      var scalar = try hexQuad()
      if (0xD800..<0xDC00).contains(scalar) {
        guard consume("\\u") else { throw Malformed(message: "A string holds half of a surrogate pair.") }
        let low = try hexQuad()
        guard (0xDC00..<0xE000).contains(low) else {
          throw Malformed(message: "A string holds half of a surrogate pair.")
        }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      }
      guard let unicode = Unicode.Scalar(scalar) else {
        throw Malformed(message: "A string holds half of a surrogate pair.")
      }
      text.append(contentsOf: UTF8.encode(unicode).map(Array.init) ?? [])
    default:
      throw Malformed(message: "A string holds an escape JSON does not have.")
    }
  }

  private mutating func hexQuad() throws -> UInt32 {
    guard position + 4 <= bytes.count else { throw Malformed(message: "A \\u escape is cut short.") }
    var value: UInt32 = 0
    for byte in bytes[position..<position + 4] {
      guard let digit = Self.hexDigit(byte) else {
        throw Malformed(message: "A \\u escape has a character that is not hexadecimal.")
      }
      value = value << 4 | digit
    }
    position += 4
    return value
  }

  private static func isDigit(_ byte: UInt8) -> Bool {
    byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")
  }

  private static func hexDigit(_ byte: UInt8) -> UInt32? {
    switch byte {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): UInt32(byte - UInt8(ascii: "0"))
    case UInt8(ascii: "a")...UInt8(ascii: "f"): UInt32(byte - UInt8(ascii: "a") + 10)
    case UInt8(ascii: "A")...UInt8(ascii: "F"): UInt32(byte - UInt8(ascii: "A") + 10)
    default: nil
    }
  }
}
