@_spi(Backend) import Coffer
import Foundation

/// Reads one line of an export (see ``JSONLines``): which kind of line it is, and a row line's
/// values, each parsed exactly by the kind of its field — integers as Int64 digits, doubles
/// with their sign and every bit, strings byte for byte.
///
/// Strict JSON: a problem throws ``CofferError/Code/invalidInput``, whose message the importer
/// completes with the line number. Messages name fields, never a value.
struct JSONLineParser {
  private var scanner: JSONScanner

  init(_ line: some StringProtocol) { scanner = JSONScanner(Array(line.utf8)) }

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
      scanner.position += 1
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
          scanner.position += 1
          continue
        }
        try expect(UInt8(ascii: "}"))
        break
      }
    }
    skipSpace()
    try expect(UInt8(ascii: "}"))
    skipSpace()
    guard scanner.isAtEnd else { throw Self.failure("A row line goes on after its object.") }
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

  // The scanner's tokens, its problems as this parser's errors.

  private func peek() -> UInt8? { scanner.peek() }
  private mutating func skipSpace() { scanner.skipSpace() }
  private mutating func consume(_ literal: StaticString) -> Bool { scanner.consume(literal) }
  private mutating func number() -> String? { scanner.number() }

  private mutating func expect(_ byte: UInt8) throws {
    do { try scanner.expect(byte) } catch let malformed as JSONScanner.Malformed {
      throw Self.failure(malformed.message)
    }
  }

  private mutating func string() throws -> String {
    do { return try scanner.string() } catch let malformed as JSONScanner.Malformed {
      throw Self.failure(malformed.message)
    }
  }

  static func failure(_ message: String) -> CofferError { CofferError(.invalidInput, message) }
}
