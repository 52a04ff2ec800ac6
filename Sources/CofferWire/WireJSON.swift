@_spi(Backend) import Coffer
import Foundation

/// The pieces the hand-written JSON of the API's busiest bodies share (``WireRowsJSON``,
/// ``WireQueryJSON``): values in their one-key form, written exactly as `Codable` writes them,
/// and a reader of that form that gives up (``Unreadable``) on anything else, for the caller to
/// hand the bytes to `JSONDecoder`, whose error says what is wrong.
package enum WireJSON {
  /// Values as a JSON array.
  static func append(_ values: [Value], to text: inout JSONText) throws {
    text += "["
    for (index, value) in values.enumerated() {
      if index > 0 { text += "," }
      try append(value, to: &text)
    }
    text += "]"
  }

  /// A value in its one-key form.
  ///
  /// - Throws: `EncodingError.invalidValue` for a NaN, which no store holds.
  static func append(_ value: Value, to text: inout JSONText) throws {
    switch value {
    case .null: text += #"{"null":true"#
    case .bool(let flag): text += flag ? #"{"bool":true"# : #"{"bool":false"#
    case .int(let number):
      text += #"{"int":"#
      text += String(number)
    case .double(let number):
      if number.isNaN {
        throw EncodingError.invalidValue(
          number, .init(codingPath: [], debugDescription: "NaN is no value a store can hold."))
      }
      text += #"{"double":"#
      if number.isInfinite {
        text += number > 0 ? #""inf""# : #""-inf""#
      } else {
        text += number.description
      }
    case .string(let string):
      text += #"{"string":"#
      text.appendQuoted(string)
    case .bytes(let data):
      text += #"{"bytes":""#
      text += data.base64EncodedString()
      text += "\""
    case .date(let date):
      text += #"{"date":"#
      text += String(Value.microseconds(since1970: date))
    case .uuid(let uuid):
      text += #"{"uuid":""#
      text += uuid.uuidString
      text += "\""
    case .document(let data):
      text += #"{"document":""#
      text += data.base64EncodedString()
      text += "\""
    }
    text += "}"
  }

  /// A key and its colon, the comma before it unless it is the object's first.
  static func appendKey(_ key: String, first: Bool = false, to text: inout JSONText) {
    if !first { text += "," }
    text.appendQuoted(key)
    text += ":"
  }

  /// Not JSON of the form the hand-written readers take: the caller falls back to `JSONDecoder`.
  struct Unreadable: Error {}

  /// Reads JSON of the one form `Codable` writes for the wire's types, white space and key order
  /// aside; anything else throws ``Unreadable``.
  struct Reader {
    var scanner: JSONScanner

    init(bytes: UnsafeRawBufferPointer) { scanner = JSONScanner(Array(bytes)) }

    /// The members of an object, each key handed to `member`, which reads its value.
    mutating func object(_ member: (inout Reader, String) throws -> Void) throws {
      try expect("{")
      if consume("}") { return }
      repeat { try member(&self, try key()) } while consume(",")
      try expect("}")
    }

    /// Throws unless only white space is left.
    mutating func end() throws {
      scanner.skipSpace()
      guard scanner.isAtEnd else { throw Unreadable() }
    }

    mutating func values() throws -> [Value] { try array { try $0.value() } }

    mutating func array<T>(_ element: (inout Reader) throws -> T) throws -> [T] {
      try expect("[")
      var elements: [T] = []
      if consume("]") { return elements }
      repeat { elements.append(try element(&self)) } while consume(",")
      try expect("]")
      return elements
    }

    mutating func value() throws -> Value {
      try expect("{")
      scanner.skipSpace()
      let value: Value
      // The kinds rows hold most, matched in place; any other (or one spelled with escapes) by name.
      if scanner.consume(#""int""#) {
        try expect(":")
        value = .int(try integer())
      } else if scanner.consume(#""string""#) {
        try expect(":")
        value = .string(try string())
      } else if scanner.consume(#""date""#) {
        try expect(":")
        value = .date(Value.date(microsecondsSince1970: try integer()))
      } else {
        value = try namedValue(try key())
      }
      try expect("}")
      return value
    }

    /// The value of a kind read by name, after its colon.
    private mutating func namedValue(_ kind: String) throws -> Value {
      let value: Value
      switch kind {
      case "null":
        guard consume("true") else { throw Unreadable() }
        value = .null
      case "bool": value = .bool(try bool())
      case "int": value = .int(try integer())
      case "double":
        if let text = number() {
          guard let number = Double(text), number.isFinite else { throw Unreadable() }
          value = .double(number)
        } else {
          switch try string() {
          case "inf": value = .double(.infinity)
          case "-inf": value = .double(-.infinity)
          default: throw Unreadable()
          }
        }
      case "string": value = .string(try string())
      case "bytes":
        guard let data = Data(base64Encoded: try string()) else { throw Unreadable() }
        value = .bytes(data)
      case "date": value = .date(Value.date(microsecondsSince1970: try integer()))
      case "uuid":
        guard let uuid = UUID(uuidString: try string()) else { throw Unreadable() }
        value = .uuid(uuid)
      case "document":
        guard let data = Data(base64Encoded: try string()) else { throw Unreadable() }
        value = .document(data)
      default: throw Unreadable()
      }
      return value
    }

    /// A key and the colon after it.
    mutating func key() throws -> String {
      let key = try string()
      try expect(":")
      return key
    }

    mutating func bool() throws -> Bool {
      if consume("true") { return true }
      if consume("false") { return false }
      throw Unreadable()
    }

    /// A JSON integer that fits an `Int64`.
    mutating func integer() throws -> Int64 {
      guard let text = number(), let number = Int64(text) else { throw Unreadable() }
      return number
    }

    // The scanner's tokens, white space before each skipped.

    mutating func number() -> String? {
      scanner.skipSpace()
      return scanner.number()
    }

    mutating func string() throws -> String {
      scanner.skipSpace()
      return try scanner.string()
    }

    mutating func consume(_ literal: StaticString) -> Bool {
      scanner.skipSpace()
      return scanner.consume(literal)
    }

    mutating func expect(_ scalar: Unicode.Scalar) throws {
      scanner.skipSpace()
      try scanner.expect(UInt8(ascii: scalar))
    }
  }
}

/// JSON being written, as UTF-8 bytes: what the hand-written writers append to, with one copy of
/// each piece and none at the end.
package struct JSONText {
  /// The bytes so far.
  package var bytes: [UInt8] = []

  package init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

  private static let hexDigits = Array("0123456789abcdef".utf8)

  /// Appends `piece` as it is (no quotes, no escapes).
  static func += (text: inout JSONText, piece: String) {
    var piece = piece
    piece.withUTF8 { text.bytes.append(contentsOf: $0) }
  }

  /// Appends `string` as a JSON string, escaped as an export escapes it
  /// (``JSONLines/appendString(_:to:)``): the quote, the backslash, line feed, carriage return
  /// and tab by their short escapes, other control characters as `\u00XX`, everything else as
  /// it is.
  mutating func appendQuoted(_ string: String) {
    var string = string
    bytes.append(UInt8(ascii: "\""))
    string.withUTF8 { utf8 in
      var plainStart = 0
      for index in utf8.indices {
        let byte = utf8[index]
        guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart..<index]))
        bytes.append(UInt8(ascii: "\\"))
        switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
        case 0x0A: bytes.append(UInt8(ascii: "n"))
        case 0x0D: bytes.append(UInt8(ascii: "r"))
        case 0x09: bytes.append(UInt8(ascii: "t"))
        default:
          bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
          bytes.append(Self.hexDigits[Int(byte >> 4)])
          bytes.append(Self.hexDigits[Int(byte & 0x0F)])
        }
        plainStart = index + 1
      }
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[plainStart...]))
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
