@_spi(Backend) import Coffer
import Foundation

/// Reads one line of an export (see ``JSONLines``): which kind of line it is, and a row line's
/// values, each parsed exactly by the kind of its field — integers as Int64 digits, doubles
/// with their sign and every bit, strings byte for byte.
///
/// Strict JSON: a problem throws ``CofferError/Code/invalidInput``, whose message the importer
/// completes with the line number. Messages name fields, never a value.
struct JSONLineParser {
  private let bytes: [UInt8]
  private var position = 0

  init(_ line: some StringProtocol) { bytes = Array(line.utf8) }

  /// The key of the line's object: `row`, `entity`, `end` or `coffer`.
  mutating func lineKind() throws -> String {
    skipSpace()
    try expect(UInt8(ascii: "{"))
    skipSpace()
    let key = try string()
    skipSpace()
    try expect(UInt8(ascii: ":"))
    return key
  }

  /// The row of a `row` line (after ``lineKind()``), in the layout of `schema`. A field the
  /// line leaves out reads as null when it is optional.
  mutating func row(of schema: EntitySchema) throws -> Row {
    var values = [Value?](repeating: nil, count: schema.fields.count)
    skipSpace()
    try expect(UInt8(ascii: "{"))
    skipSpace()
    if peek() == UInt8(ascii: "}") {
      position += 1
    } else {
      while true {
        skipSpace()
        let name = try string()
        guard let field = schema.position(of: name) else {
          throw Self.failure("A row has a field `\(name)` that the entity's schema does not have.")
        }
        guard values[field] == nil else { throw Self.failure("A row gives the field `\(name)` twice.") }
        skipSpace()
        try expect(UInt8(ascii: ":"))
        skipSpace()
        values[field] = try value(for: schema.fields[field])
        skipSpace()
        if peek() == UInt8(ascii: ",") {
          position += 1
          continue
        }
        try expect(UInt8(ascii: "}"))
        break
      }
    }
    skipSpace()
    try expect(UInt8(ascii: "}"))
    skipSpace()
    guard position == bytes.count else { throw Self.failure("A row line goes on after its object.") }
    var row: [Value] = []
    row.reserveCapacity(values.count)
    for (field, value) in zip(schema.fields, values) {
      if let value {
        row.append(value)
      } else if field.isOptional {
        row.append(.null)
      } else {
        throw Self.failure("A row leaves out the required field `\(field.name)`.")
      }
    }
    return Row(row)
  }

  /// One value, read as the field's kind.
  private mutating func value(for field: Field) throws -> Value {
    if consume("null") {
      guard field.isOptional else { throw Self.failure("The required field `\(field.name)` is null.") }
      return .null
    }
    switch field.kind {
    case .bool:
      if consume("true") { return .bool(true) }
      if consume("false") { return .bool(false) }
    case .int:
      if let text = number(), let int = Int64(text) { return .int(int) }
    case .double:
      if let text = number(), let double = Double(text), double.isFinite { return .double(double) }
      if peek() == UInt8(ascii: "\"") {
        switch try string() {
        case "inf": return .double(.infinity)
        case "-inf": return .double(-.infinity)
        default: break
        }
      }
    case .string:
      if peek() == UInt8(ascii: "\"") { return .string(try string()) }
    case .bytes, .document:
      if peek() == UInt8(ascii: "\""), let data = Data(base64Encoded: try string()) {
        return field.kind == .bytes ? .bytes(data) : .document(data)
      }
    case .date:
      if peek() == UInt8(ascii: "\""), let microseconds = ExportDate.microseconds(text: try string()) {
        return .date(Value.date(microsecondsSince1970: microseconds))
      }
    case .uuid:
      if peek() == UInt8(ascii: "\""), let uuid = UUID(uuidString: try string()) { return .uuid(uuid) }
    }
    throw Self.failure(
      "The field `\(field.name)` does not hold a \(field.kind.rawValue) in the export's form (see Docs/Tools.md)."
    )
  }

  /// The text of a JSON number, or `nil` (nothing consumed) when none starts here.
  private mutating func number() -> String? {
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
  private mutating func string() throws -> String {
    try expect(UInt8(ascii: "\""))
    var text: [UInt8] = []
    while true {
      guard let byte = peek() else { throw Self.failure("A string is not closed before the line ends.") }
      position += 1
      switch byte {
      case UInt8(ascii: "\""):
        guard let string = String(validating: text, as: UTF8.self) else {
          throw Self.failure("A string is not valid UTF-8.")
        }
        return string
      case UInt8(ascii: "\\"):
        try unescape(into: &text)
      case 0..<0x20:
        throw Self.failure("A string holds a control character that JSON requires to be escaped.")
      default:
        text.append(byte)
      }
    }
  }

  /// One escape after its backslash.
  private mutating func unescape(into text: inout [UInt8]) throws {
    guard let byte = peek() else { throw Self.failure("A string ends in a backslash.") }
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
        guard consume("\\u") else { throw Self.failure("A string holds half of a surrogate pair.") }
        let low = try hexQuad()
        guard (0xDC00..<0xE000).contains(low) else {
          throw Self.failure("A string holds half of a surrogate pair.")
        }
        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
      }
      guard let unicode = Unicode.Scalar(scalar) else {
        throw Self.failure("A string holds half of a surrogate pair.")
      }
      text.append(contentsOf: UTF8.encode(unicode).map(Array.init) ?? [])
    default:
      throw Self.failure("A string holds an escape JSON does not have.")
    }
  }

  private mutating func hexQuad() throws -> UInt32 {
    guard position + 4 <= bytes.count else { throw Self.failure("A \\u escape is cut short.") }
    var value: UInt32 = 0
    for byte in bytes[position..<position + 4] {
      guard let digit = Self.hexDigit(byte) else {
        throw Self.failure("A \\u escape has a character that is not hexadecimal.")
      }
      value = value << 4 | digit
    }
    position += 4
    return value
  }

  private func peek() -> UInt8? { position < bytes.count ? bytes[position] : nil }

  private mutating func skipSpace() {
    while let byte = peek(), byte == 0x20 || byte == 0x09 || byte == 0x0D || byte == 0x0A { position += 1 }
  }

  private mutating func expect(_ byte: UInt8) throws {
    guard peek() == byte else {
      throw Self.failure("Expected `\(Character(Unicode.Scalar(byte)))` where the line has something else.")
    }
    position += 1
  }

  /// Consumes `literal` when the line continues with it.
  private mutating func consume(_ literal: StaticString) -> Bool {
    let count = literal.utf8CodeUnitCount
    guard position + count <= bytes.count else { return false }
    let matches = literal.withUTF8Buffer { expected in
      bytes[position..<position + count].elementsEqual(expected)
    }
    if matches { position += count }
    return matches
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

  static func failure(_ message: String) -> CofferError { CofferError(.invalidInput, message) }
}
