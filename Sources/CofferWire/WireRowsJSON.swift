@_spi(Backend) import Coffer
import Foundation

/// ``WireRows`` in JSON written and read by hand: the rows are what the API sends most, and
/// Foundation's `JSONEncoder` and `JSONDecoder` spend more on a page of rows (a keyed container for
/// each value) than the store spends reading them.
///
/// The form is exactly the one `Codable` gives (the Formats article's): `{"rows":[[{"int":1},…],…],
/// "next":{"values":[…]}}`, `next` left out when there is none. Either side may use `Codable` for
/// the same bytes; ``read(_:)`` takes any JSON of that form (white space, keys in any order,
/// escapes) and answers `nil` for anything else, for the caller to hand to `JSONDecoder`, whose
/// error says what is wrong.
package enum WireRowsJSON {
  /// The rows as JSON.
  ///
  /// - Throws: `EncodingError.invalidValue` for a NaN, which no store holds.
  package static func write(_ rows: WireRows) throws -> [UInt8] {
    var text = #"{"rows":["#
    text.reserveCapacity(64 + rows.rows.count * (rows.rows.first?.count ?? 0) * 24)
    for (index, row) in rows.rows.enumerated() {
      if index > 0 { text += "," }
      try append(row, to: &text)
    }
    text += "]"
    if let next = rows.next {
      text += #","next":{"values":"#
      try append(next.values, to: &text)
      text += "}"
    }
    text += "}"
    return Array(text.utf8)
  }

  /// The rows in `bytes`, or `nil` when they are not JSON of the form ``write(_:)`` writes.
  package static func read(_ bytes: UnsafeRawBufferPointer) -> WireRows? {
    var reader = Reader(bytes: bytes)
    return try? reader.rows()
  }

  private static func append(_ values: [Value], to text: inout String) throws {
    text += "["
    for (index, value) in values.enumerated() {
      if index > 0 { text += "," }
      try append(value, to: &text)
    }
    text += "]"
  }

  /// A value in its one-key form; strings escaped as an export escapes them
  /// (``JSONLines/appendString(_:to:)``).
  private static func append(_ value: Value, to text: inout String) throws {
    switch value {
    case .null: text += #"{"null":true"#
    case .bool(let flag): text += flag ? #"{"bool":true"# : #"{"bool":false"#
    case .int(let number): text += #"{"int":"# + String(number)
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
      JSONLines.appendString(string, to: &text)
    case .bytes(let data): text += #"{"bytes":""# + data.base64EncodedString() + "\""
    case .date(let date): text += #"{"date":"# + String(Value.microseconds(since1970: date))
    case .uuid(let uuid): text += #"{"uuid":""# + uuid.uuidString + "\""
    case .document(let data): text += #"{"document":""# + data.base64EncodedString() + "\""
    }
    text += "}"
  }

  /// Not JSON of the rows' form: the caller falls back to `JSONDecoder`.
  struct Unreadable: Error {}

  struct Reader {
    var scanner: JSONScanner

    init(bytes: UnsafeRawBufferPointer) { scanner = JSONScanner(Array(bytes)) }

    mutating func rows() throws -> WireRows {
      var rows: [[Value]]?
      var next: WireCursor?
      try expect("{")
      if !consume("}") {
        repeat {
          switch try key() {
          case "rows":
            guard rows == nil else { throw Unreadable() }
            rows = try array { try $0.values() }
          case "next":
            guard next == nil else { throw Unreadable() }
            if !consume("null") {
              try expect("{")
              guard try key() == "values" else { throw Unreadable() }
              next = WireCursor(values: try values())
              try expect("}")
            }
          default: throw Unreadable()
          }
        } while consume(",")
        try expect("}")
      }
      scanner.skipSpace()
      guard scanner.isAtEnd, let rows else { throw Unreadable() }
      return WireRows(rows: rows, next: next)
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
      let kind = try key()
      let value: Value
      switch kind {
      case "null":
        guard consume("true") else { throw Unreadable() }
        value = .null
      case "bool":
        if consume("true") {
          value = .bool(true)
        } else if consume("false") {
          value = .bool(false)
        } else {
          throw Unreadable()
        }
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
      try expect("}")
      return value
    }

    /// A key and the colon after it.
    mutating func key() throws -> String {
      let key = try string()
      try expect(":")
      return key
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
