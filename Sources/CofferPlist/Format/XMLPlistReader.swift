import Foundation

/// Parses XML property lists straight from bytes into ``PlistValue``s.
///
/// Accepts what plist tools write: an XML declaration, a DOCTYPE, comments, `<plist>` around one
/// value, the eight plist elements with their empty forms, the five named entities and numeric
/// character references. Never trusts the input: every malformed or truncated document is a
/// ``PlistSyntaxError`` with the byte offset.
struct XMLPlistReader {
  private let bytes: [UInt8]
  private var index = 0
  private static let maximumDepth = 256

  init(_ data: Data) { bytes = [UInt8](data) }

  static func parse(_ data: Data) throws -> PlistValue {
    var reader = XMLPlistReader(data)
    return try reader.parseDocument()
  }

  private func fail(_ reason: String) -> PlistSyntaxError { PlistSyntaxError(offset: index, reason: reason) }

  mutating func parseDocument() throws -> PlistValue {
    skipBOM()
    try skipMisc()
    guard try peekTag() == "plist" else { throw fail("expected <plist>") }
    _ = try readTag()
    try skipMisc()
    let value = try parseValue(depth: 0)
    try skipMisc()
    let close = try readTag()
    guard close.name == "plist", close.isClosing else { throw fail("expected </plist>") }
    try skipMisc()
    guard index == bytes.count else { throw fail("unexpected content after </plist>") }
    return value
  }

  private mutating func skipBOM() {
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
  }

  /// Skips white space, the XML declaration, DOCTYPE and comments.
  private mutating func skipMisc() throws {
    while true {
      skipWhitespace()
      if starts(with: "<?") {
        try skip(past: "?>")
      } else if starts(with: "<!--") {
        try skip(past: "-->")
      } else if starts(with: "<!DOCTYPE") {
        try skip(past: ">")
      } else {
        return
      }
    }
  }

  private mutating func skipWhitespace() {
    while index < bytes.count,
      bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D
    {
      index += 1
    }
  }

  private func starts(with text: StaticString) -> Bool {
    let count = text.utf8CodeUnitCount
    guard index + count <= bytes.count else { return false }
    return text.withUTF8Buffer { pattern in
      for offset in 0..<count where bytes[index + offset] != pattern[offset] { return false }
      return true
    }
  }

  private mutating func skip(past text: StaticString) throws {
    while index < bytes.count {
      if starts(with: text) {
        index += text.utf8CodeUnitCount
        return
      }
      index += 1
    }
    throw fail("unterminated markup (expected \(text))")
  }

  struct Tag {
    var name: String
    var isClosing: Bool
    var isEmpty: Bool
  }

  private mutating func peekTag() throws -> String {
    let saved = index
    defer { index = saved }
    return try readTag().name
  }

  private mutating func readTag() throws -> Tag {
    guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { throw fail("expected an element") }
    index += 1
    var closing = false
    if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
      closing = true
      index += 1
    }
    let start = index
    while index < bytes.count, bytes[index] != UInt8(ascii: ">"), bytes[index] != UInt8(ascii: "/"),
      bytes[index] != 0x20, bytes[index] != 0x09, bytes[index] != 0x0A, bytes[index] != 0x0D
    {
      index += 1
    }
    let name = String(decoding: bytes[start..<index], as: UTF8.self)
    while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
    guard index < bytes.count else { throw fail("unterminated tag <\(name)") }
    let empty = bytes[index - 1] == UInt8(ascii: "/")
    index += 1
    if name.isEmpty { throw fail("empty element name") }
    return Tag(name: name, isClosing: closing, isEmpty: empty && !closing)
  }

  private mutating func parseValue(depth: Int) throws -> PlistValue {
    guard depth < Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth)") }
    let tagStart = index
    let tag = try readTag()
    guard !tag.isClosing else {
      index = tagStart
      throw fail("unexpected </\(tag.name)>")
    }
    switch tag.name {
    case "dict": return tag.isEmpty ? .dict([]) : try parseDict(depth: depth)
    case "array": return tag.isEmpty ? .array([]) : try parseArray(depth: depth)
    case "true": return try bool(true, tag)
    case "false": return try bool(false, tag)
    case "string": return .string(tag.isEmpty ? "" : try text(closing: "string"))
    case "integer":
      let text = try text(closing: "integer").trimmingCharacters(in: .whitespacesAndNewlines)
      guard let number = Self.integer(text) else { throw fail("'\(text)' is not an integer") }
      return .integer(number)
    case "real":
      let text = try text(closing: "real").trimmingCharacters(in: .whitespacesAndNewlines)
      guard let number = Self.real(text) else { throw fail("'\(text)' is not a real number") }
      return .real(number)
    case "data":
      let text = tag.isEmpty ? "" : try text(closing: "data")
      let compact = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
      guard let data = Data(base64Encoded: compact) else { throw fail("<data> is not valid base64") }
      return .data(data)
    case "date":
      let text = try text(closing: "date").trimmingCharacters(in: .whitespacesAndNewlines)
      guard let date = try? Date(text, strategy: .iso8601) else {
        throw fail("'\(text)' is not an ISO 8601 date")
      }
      return .date(date)
    default:
      throw fail("unknown element <\(tag.name)>")
    }
  }

  private mutating func bool(_ value: Bool, _ tag: Tag) throws -> PlistValue {
    if !tag.isEmpty {
      let close = try readTag()
      guard close.isClosing, close.name == tag.name else { throw fail("expected </\(tag.name)>") }
    }
    return .bool(value)
  }

  private mutating func parseDict(depth: Int) throws -> PlistValue {
    var entries: [(key: String, value: PlistValue)] = []
    while true {
      skipWhitespaceAndComments()
      let saved = index
      let tag = try readTag()
      if tag.isClosing {
        guard tag.name == "dict" else { throw fail("expected </dict>, found </\(tag.name)>") }
        return .dict(entries)
      }
      guard tag.name == "key" else {
        index = saved
        throw fail("expected <key> in <dict>, found <\(tag.name)>")
      }
      let key = tag.isEmpty ? "" : try text(closing: "key")
      skipWhitespaceAndComments()
      entries.append((key, try parseValue(depth: depth + 1)))
    }
  }

  private mutating func parseArray(depth: Int) throws -> PlistValue {
    var items: [PlistValue] = []
    while true {
      skipWhitespaceAndComments()
      if starts(with: "</") {
        let tag = try readTag()
        guard tag.name == "array" else { throw fail("expected </array>, found </\(tag.name)>") }
        return .array(items)
      }
      items.append(try parseValue(depth: depth + 1))
    }
  }

  private mutating func skipWhitespaceAndComments() {
    while true {
      skipWhitespace()
      guard starts(with: "<!--") else { return }
      do { try skip(past: "-->") } catch { return }
    }
  }

  /// Character data up to `</name>`, with entities and character references resolved.
  private mutating func text(closing name: String) throws -> String {
    var out: [UInt8] = []
    while index < bytes.count {
      let byte = bytes[index]
      if byte == UInt8(ascii: "<") {
        if starts(with: "<![CDATA[") {
          index += 9
          let start = index
          try skip(past: "]]>")
          out.append(contentsOf: bytes[start..<(index - 3)])
          continue
        }
        let tag = try readTag()
        guard tag.isClosing, tag.name == name else { throw fail("expected </\(name)>") }
        return String(decoding: out, as: UTF8.self)
      }
      if byte == UInt8(ascii: "&") {
        try appendEntity(into: &out)
        continue
      }
      if byte == 0x0D {
        // XML line-end normalization: CR LF and lone CR read as LF.
        out.append(0x0A)
        index += 1
        if index < bytes.count, bytes[index] == 0x0A { index += 1 }
        continue
      }
      out.append(byte)
      index += 1
    }
    throw fail("unterminated <\(name)>")
  }

  private mutating func appendEntity(into out: inout [UInt8]) throws {
    guard let end = bytes[index...].prefix(12).firstIndex(of: UInt8(ascii: ";")) else {
      throw fail("unterminated entity")
    }
    let name = String(decoding: bytes[(index + 1)..<end], as: UTF8.self)
    index = end + 1
    switch name {
    case "amp": out.append(UInt8(ascii: "&"))
    case "lt": out.append(UInt8(ascii: "<"))
    case "gt": out.append(UInt8(ascii: ">"))
    case "quot": out.append(UInt8(ascii: "\""))
    case "apos": out.append(UInt8(ascii: "'"))
    default:
      let code: UInt32?
      if name.hasPrefix("#x") || name.hasPrefix("#X") {
        code = UInt32(name.dropFirst(2), radix: 16)
      } else if name.hasPrefix("#") {
        code = UInt32(name.dropFirst())
      } else {
        code = nil
      }
      guard let code, let scalar = Unicode.Scalar(code) else { throw fail("unknown entity &\(name);") }
      out.append(contentsOf: String(Character(scalar)).utf8)
    }
  }

  static func integer(_ text: String) -> Int64? {
    if text.hasPrefix("0x") || text.hasPrefix("0X") { return Int64(text.dropFirst(2), radix: 16) }
    return Int64(text)
  }

  static func real(_ text: String) -> Double? {
    switch text.lowercased() {
    case "inf", "+inf", "infinity", "+infinity": return .infinity
    case "-inf", "-infinity": return -.infinity
    case "nan": return .nan
    default: return Double(text)
    }
  }
}
