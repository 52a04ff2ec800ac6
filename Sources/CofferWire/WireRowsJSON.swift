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
    var writer = Writer()
    writer.bytes.reserveCapacity(64 + rows.rows.count * (rows.rows.first?.count ?? 0) * 24)
    writer.append(#"{"rows":["#)
    for (index, row) in rows.rows.enumerated() {
      if index > 0 { writer.bytes.append(UInt8(ascii: ",")) }
      try writer.values(row)
    }
    writer.bytes.append(UInt8(ascii: "]"))
    if let next = rows.next {
      writer.append(#","next":{"values":"#)
      try writer.values(next.values)
      writer.bytes.append(UInt8(ascii: "}"))
    }
    writer.bytes.append(UInt8(ascii: "}"))
    return writer.bytes
  }

  /// The rows in `bytes`, or `nil` when they are not JSON of the form ``write(_:)`` writes.
  package static func read(_ bytes: UnsafeRawBufferPointer) -> WireRows? {
    var reader = Reader(bytes: bytes)
    return try? reader.rows()
  }

  struct Writer {
    var bytes: [UInt8] = []

    mutating func append(_ text: StaticString) {
      text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    mutating func values(_ values: [Value]) throws {
      bytes.append(UInt8(ascii: "["))
      for (index, value) in values.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        try self.value(value)
      }
      bytes.append(UInt8(ascii: "]"))
    }

    mutating func value(_ value: Value) throws {
      switch value {
      case .null: append(#"{"null":true"#)
      case .bool(let flag): flag ? append(#"{"bool":true"#) : append(#"{"bool":false"#)
      case .int(let number):
        append(#"{"int":"#)
        integer(number)
      case .double(let number):
        if number.isNaN {
          throw EncodingError.invalidValue(
            number, .init(codingPath: [], debugDescription: "NaN is no value a store can hold."))
        }
        append(#"{"double":"#)
        if number.isInfinite {
          number > 0 ? append(#""inf""#) : append(#""-inf""#)
        } else {
          bytes.append(contentsOf: number.description.utf8)
        }
      case .string(let text):
        append(#"{"string":"#)
        string(text)
      case .bytes(let data):
        append(#"{"bytes":""#)
        bytes.append(contentsOf: data.base64EncodedString().utf8)
        bytes.append(UInt8(ascii: "\""))
      case .date(let date):
        append(#"{"date":"#)
        integer(Value.microseconds(since1970: date))
      case .uuid(let uuid):
        append(#"{"uuid":""#)
        bytes.append(contentsOf: uuid.uuidString.utf8)
        bytes.append(UInt8(ascii: "\""))
      case .document(let data):
        append(#"{"document":""#)
        bytes.append(contentsOf: data.base64EncodedString().utf8)
        bytes.append(UInt8(ascii: "\""))
      }
      bytes.append(UInt8(ascii: "}"))
    }

    mutating func integer(_ number: Int64) {
      if number < 0 { bytes.append(UInt8(ascii: "-")) }
      var magnitude = number.magnitude
      var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: room for 20 digits.
      var count = 0
      withUnsafeMutableBytes(of: &digits) { buffer in
        repeat {
          buffer[23 - count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
          magnitude /= 10
          count += 1
        } while magnitude > 0
        bytes.append(contentsOf: buffer[(24 - count)...])
      }
    }

    mutating func string(_ text: String) {
      bytes.append(UInt8(ascii: "\""))
      for byte in text.utf8 {
        switch byte {
        case UInt8(ascii: "\""): append(#"\""#)
        case UInt8(ascii: "\\"): append(#"\\"#)
        case 0x0A: append(#"\n"#)
        case 0x0D: append(#"\r"#)
        case 0x09: append(#"\t"#)
        case 0..<0x20:
          append(#"\u00"#)
          bytes.append(Self.hex[Int(byte >> 4)])
          bytes.append(Self.hex[Int(byte & 0xF)])
        default: bytes.append(byte)
        }
      }
      bytes.append(UInt8(ascii: "\""))
    }

    static let hex = Array("0123456789abcdef".utf8)
  }

  /// Not JSON of the rows' form: the caller falls back to `JSONDecoder`.
  struct Unreadable: Error {}

  struct Reader {
    let bytes: UnsafeRawBufferPointer
    var index = 0

    mutating func rows() throws -> WireRows {
      var rows: [[Value]]?
      var next: WireCursor?
      try expect("{")
      if try !consume("}") {
        repeat {
          switch try key() {
          case "rows":
            guard rows == nil else { throw Unreadable() }
            rows = try array { try $0.values() }
          case "next":
            guard next == nil else { throw Unreadable() }
            if try consume("n") {
              try literal("ull")
            } else {
              try expect("{")
              guard try key() == "values" else { throw Unreadable() }
              next = WireCursor(values: try values())
              try expect("}")
            }
          default: throw Unreadable()
          }
        } while try consume(",")
        try expect("}")
      }
      skipSpace()
      guard index == bytes.count, let rows else { throw Unreadable() }
      return WireRows(rows: rows, next: next)
    }

    mutating func values() throws -> [Value] { try array { try $0.value() } }

    mutating func array<T>(_ element: (inout Reader) throws -> T) throws -> [T] {
      try expect("[")
      var elements: [T] = []
      if try consume("]") { return elements }
      repeat { elements.append(try element(&self)) } while try consume(",")
      try expect("]")
      return elements
    }

    mutating func value() throws -> Value {
      try expect("{")
      let kind = try key()
      let value: Value
      switch kind {
      case "null":
        try expect("t")
        try literal("rue")
        value = .null
      case "bool":
        if try consume("t") {
          try literal("rue")
          value = .bool(true)
        } else {
          try expect("f")
          try literal("alse")
          value = .bool(false)
        }
      case "int": value = .int(try integer())
      case "double":
        if try peek() == UInt8(ascii: "\"") {
          switch try string() {
          case "inf": value = .double(.infinity)
          case "-inf": value = .double(-.infinity)
          default: throw Unreadable()
          }
        } else {
          value = .double(try double())
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

    mutating func skipSpace() {
      while index < bytes.count {
        switch bytes[index] {
        case 0x20, 0x0A, 0x0D, 0x09: index += 1
        default: return
        }
      }
    }

    mutating func peek() throws -> UInt8 {
      skipSpace()
      guard index < bytes.count else { throw Unreadable() }
      return bytes[index]
    }

    mutating func consume(_ scalar: Unicode.Scalar) throws -> Bool {
      guard try peek() == UInt8(ascii: scalar) else { return false }
      index += 1
      return true
    }

    mutating func expect(_ scalar: Unicode.Scalar) throws {
      guard try consume(scalar) else { throw Unreadable() }
    }

    /// The rest of a literal, with no space inside it.
    mutating func literal(_ rest: StaticString) throws {
      let matched = rest.withUTF8Buffer { rest in
        bytes.count - index >= rest.count
          && rest.enumerated().allSatisfy { offset, byte in bytes[index + offset] == byte }
      }
      guard matched else { throw Unreadable() }
      index += rest.utf8CodeUnitCount
    }

    /// A JSON integer that fits an `Int64`.
    mutating func integer() throws -> Int64 {
      skipSpace()
      let negative = index < bytes.count && bytes[index] == UInt8(ascii: "-")
      if negative { index += 1 }
      var magnitude: UInt64 = 0
      let start = index
      while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) {
        let (times, overflow) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, carry) = times.addingReportingOverflow(UInt64(bytes[index] - UInt8(ascii: "0")))
        guard !overflow, !carry else { throw Unreadable() }
        magnitude = sum
        index += 1
      }
      guard index > start, index - start == 1 || bytes[start] != UInt8(ascii: "0") else { throw Unreadable() }
      if index < bytes.count,
        [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index])
      {
        throw Unreadable()
      }
      if negative {
        guard magnitude <= UInt64(Int64.max) + 1 else { throw Unreadable() }
        return magnitude == UInt64(Int64.max) + 1 ? .min : -Int64(magnitude)
      }
      guard magnitude <= UInt64(Int64.max) else { throw Unreadable() }
      return Int64(magnitude)
    }

    /// A JSON number as a `Double`.
    mutating func double() throws -> Double {
      skipSpace()
      let start = index
      while index < bytes.count {
        switch bytes[index] {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."),
          UInt8(ascii: "e"), UInt8(ascii: "E"):
          index += 1
        default:
          guard index > start, let number = Double(String(decoding: bytes[start..<index], as: UTF8.self)),
            number.isFinite
          else { throw Unreadable() }
          return number
        }
      }
      throw Unreadable()
    }

    /// A JSON string, its escapes undone.
    mutating func string() throws -> String {
      try expect("\"")
      let start = index
      // Most strings have no escape: read them straight from the bytes.
      while index < bytes.count {
        let byte = bytes[index]
        if byte == UInt8(ascii: "\"") {
          defer { index += 1 }
          return try text(bytes[start..<index])
        }
        if byte == UInt8(ascii: "\\") { break }
        guard byte >= 0x20 else { throw Unreadable() }
        index += 1
      }
      var utf8 = Array(bytes[start..<index])
      while index < bytes.count {
        let byte = bytes[index]
        index += 1
        switch byte {
        case UInt8(ascii: "\""): return try text(utf8[...])
        case UInt8(ascii: "\\"):
          guard index < bytes.count else { throw Unreadable() }
          let escaped = bytes[index]
          index += 1
          switch escaped {
          case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): utf8.append(escaped)
          case UInt8(ascii: "b"): utf8.append(0x08)
          case UInt8(ascii: "f"): utf8.append(0x0C)
          case UInt8(ascii: "n"): utf8.append(0x0A)
          case UInt8(ascii: "r"): utf8.append(0x0D)
          case UInt8(ascii: "t"): utf8.append(0x09)
          case UInt8(ascii: "u"):
            var scalar = try hex4()
            if (0xD800..<0xDC00).contains(scalar) {
              try literal(#"\u"#)
              let low = try hex4()
              guard (0xDC00..<0xE000).contains(low) else { throw Unreadable() }
              scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw Unreadable() }
            utf8.append(contentsOf: String(Character(unicode)).utf8)
          default: throw Unreadable()
          }
        default:
          guard byte >= 0x20 else { throw Unreadable() }
          utf8.append(byte)
        }
      }
      throw Unreadable()
    }

    private mutating func hex4() throws -> UInt32 {
      guard bytes.count - index >= 4 else { throw Unreadable() }
      var result: UInt32 = 0
      for _ in 0..<4 {
        let byte = bytes[index]
        let digit: UInt8
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
        default: throw Unreadable()
        }
        result = result << 4 | UInt32(digit)
        index += 1
      }
      return result
    }

    private func text<C: Collection<UInt8>>(_ utf8: C) throws -> String {
      guard let text = String(validating: utf8, as: UTF8.self) else { throw Unreadable() }
      return text
    }
  }
}
