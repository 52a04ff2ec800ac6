import Foundation

/// Parses XML property lists straight from bytes into ``PlistValue``s.
///
/// Accepts what plist tools write: an XML declaration, a DOCTYPE, comments, `<plist>` around one
/// value, the eight plist elements with their empty forms, CDATA sections, the five named
/// entities and numeric character references. Never trusts the input: every malformed or
/// truncated document is a ``PlistSyntaxError`` with the byte offset.
///
/// Element names are matched as bytes and plain text becomes a `String` straight from the
/// buffer, so reading a large store allocates little beyond the values themselves.
struct XMLPlistReader {
  let bytes: UnsafeBufferPointer<UInt8>
  var index = 0
  private static let maximumDepth = 256

  init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

  static func parse(_ data: Data) throws -> PlistValue {
    try parse([UInt8](data))
  }

  static func parse(_ bytes: [UInt8]) throws -> PlistValue {
    try bytes.withUnsafeBufferPointer { buffer in
      var reader = XMLPlistReader(buffer)
      return try reader.parseDocument()
    }
  }

  func fail(_ reason: String) -> PlistSyntaxError { PlistSyntaxError(offset: index, reason: reason) }

  // MARK: Element names

  enum Name: Equatable {
    case plist, dict, array, key, string, integer, real, `true`, `false`, data, date
    case other(String)

    var text: String {
      switch self {
      case .other(let name): name
      default: "\(self)"
      }
    }
  }

  private func name(_ start: Int, _ end: Int) -> Name {
    func equals(_ literal: StaticString) -> Bool {
      guard literal.utf8CodeUnitCount == end - start else { return false }
      return literal.withUTF8Buffer { pattern in
        for offset in 0..<pattern.count where bytes[start + offset] != pattern[offset] { return false }
        return true
      }
    }
    switch end - start {
    case 3: if equals("key") { return .key }
    case 4:
      if equals("dict") { return .dict }
      if equals("real") { return .real }
      if equals("true") { return .true }
      if equals("data") { return .data }
      if equals("date") { return .date }
    case 5:
      if equals("plist") { return .plist }
      if equals("array") { return .array }
      if equals("false") { return .false }
    case 6: if equals("string") { return .string }
    case 7: if equals("integer") { return .integer }
    default: break
    }
    return .other(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
  }

  struct Tag {
    var name: Name
    var isClosing: Bool
    var isEmpty: Bool
  }

  // MARK: Document

  mutating func parseDocument() throws -> PlistValue {
    try openDocument()
    let value = try parseValue(depth: 0)
    try closeDocument()
    return value
  }

  /// Reads everything before the top value: a byte order mark, the prolog and `<plist>`.
  mutating func openDocument() throws {
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
    try skipMisc()
    let open = try readTag()
    guard open.name == .plist, !open.isClosing else { throw fail("expected <plist>") }
    try skipMisc()
  }

  /// Reads everything after the top value: `</plist>` and nothing but white space or comments.
  mutating func closeDocument() throws {
    try skipMisc()
    let close = try readTag()
    guard close.name == .plist, close.isClosing else { throw fail("expected </plist>") }
    try skipMisc()
    guard index == bytes.count else { throw fail("unexpected content after </plist>") }
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

  @inline(__always)
  private mutating func skipWhitespace() {
    var position = index
    scan: while position < bytes.count {
      switch bytes[position] {
      case 0x20, 0x09, 0x0A, 0x0D: position += 1
      default: break scan
      }
    }
    index = position
  }

  @inline(__always)
  func starts(with text: StaticString) -> Bool {
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

  mutating func readTag() throws -> Tag {
    guard index < bytes.count, bytes[index] == UInt8(ascii: "<") else { throw fail("expected an element") }
    index += 1
    var closing = false
    if index < bytes.count, bytes[index] == UInt8(ascii: "/") {
      closing = true
      index += 1
    }
    let start = index
    scan: while index < bytes.count {
      switch bytes[index] {
      case UInt8(ascii: ">"), UInt8(ascii: "/"), 0x20, 0x09, 0x0A, 0x0D: break scan
      default: index += 1
      }
    }
    let end = index
    guard end > start else { throw fail("empty element name") }
    while index < bytes.count, bytes[index] != UInt8(ascii: ">") { index += 1 }
    guard index < bytes.count else { throw fail("unterminated tag") }
    let empty = bytes[index - 1] == UInt8(ascii: "/")
    index += 1
    return Tag(name: name(start, end), isClosing: closing, isEmpty: empty && !closing)
  }

  // MARK: Values

  mutating func parseValue(depth: Int) throws -> PlistValue {
    guard depth < Self.maximumDepth else { throw fail("nesting deeper than \(Self.maximumDepth)") }
    let tagStart = index
    let tag = try readTag()
    guard !tag.isClosing else {
      index = tagStart
      throw fail("unexpected </\(tag.name.text)>")
    }
    switch tag.name {
    case .dict: return tag.isEmpty ? .dict([]) : try parseDict(depth: depth)
    case .array: return tag.isEmpty ? .array([]) : try parseArray(depth: depth)
    case .true: return try bool(true, tag)
    case .false: return try bool(false, tag)
    case .string: return .string(tag.isEmpty ? "" : try text(closing: .string))
    case .integer:
      if let number = try fastInteger() { return .integer(number) }
      let text = try text(closing: .integer).trimmingCharacters(in: .whitespacesAndNewlines)
      guard let number = Self.integer(text) else { throw fail("an <integer> does not hold an integer") }
      return .integer(number)
    case .real:
      let text = try text(closing: .real).trimmingCharacters(in: .whitespacesAndNewlines)
      guard let number = Self.real(text) else { throw fail("a <real> does not hold a real number") }
      return .real(number)
    case .data:
      let text = tag.isEmpty ? "" : try text(closing: .data)
      let compact = String(text.unicodeScalars.filter { !$0.properties.isWhitespace })
      guard let data = Data(base64Encoded: compact) else { throw fail("<data> is not valid base64") }
      return .data(data)
    case .date:
      let text = try text(closing: .date).trimmingCharacters(in: .whitespacesAndNewlines)
      guard let date = try? Date(text, strategy: .iso8601) else {
        throw fail("a <date> does not hold an ISO 8601 date")
      }
      return .date(date)
    default:
      throw fail("unknown element <\(tag.name.text)>")
    }
  }

  private mutating func bool(_ value: Bool, _ tag: Tag) throws -> PlistValue {
    if !tag.isEmpty {
      let close = try readTag()
      guard close.isClosing, close.name == tag.name else { throw fail("expected </\(tag.name.text)>") }
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
        guard tag.name == .dict else { throw fail("expected </dict>, found </\(tag.name.text)>") }
        return .dict(entries)
      }
      guard tag.name == .key else {
        index = saved
        throw fail("expected <key> in <dict>, found <\(tag.name.text)>")
      }
      let key = tag.isEmpty ? "" : try text(closing: .key)
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
        guard tag.name == .array else { throw fail("expected </array>, found </\(tag.name.text)>") }
        return .array(items)
      }
      items.append(try parseValue(depth: depth + 1))
    }
  }

  @inline(__always)
  mutating func skipWhitespaceAndComments() {
    while true {
      skipWhitespace()
      guard starts(with: "<!--") else { return }
      do { try skip(past: "-->") } catch { return }
    }
  }

  /// A decimal integer followed directly by its closing tag, read without making text; `nil`
  /// (with nothing consumed) for anything else, which the general path then reads.
  mutating func fastInteger() throws -> Int64? {
    guard let (value, end) = decimal(at: index) else { return nil }
    let saved = index
    index = end
    let close = try readTag()
    guard close.isClosing, close.name == .integer else {
      index = saved
      return nil
    }
    return value
  }

  /// An optionally negative decimal integer at `start` that fits an `Int64` and is followed by
  /// `<`, and the position of that `<`; `nil` for anything else.
  func decimal(at start: Int) -> (value: Int64, end: Int)? {
    var position = start
    var negative = false
    if position < bytes.count, bytes[position] == UInt8(ascii: "-") {
      negative = true
      position += 1
    }
    let digitsStart = position
    var magnitude: UInt64 = 0
    while position < bytes.count, bytes[position] &- UInt8(ascii: "0") < 10 {
      // Up to 19 digits cannot overflow; the twentieth is checked.
      if position - digitsStart < 19 {
        magnitude = magnitude &* 10 &+ UInt64(bytes[position] &- UInt8(ascii: "0"))
      } else {
        let (times, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
        let (sum, overflow2) = times.addingReportingOverflow(UInt64(bytes[position] &- UInt8(ascii: "0")))
        if overflow1 || overflow2 { return nil }
        magnitude = sum
      }
      position += 1
    }
    guard position > digitsStart, position < bytes.count, bytes[position] == UInt8(ascii: "<") else {
      return nil
    }
    if negative {
      guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
      return (magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude), position)
    }
    guard magnitude <= UInt64(Int64.max) else { return nil }
    return (Int64(magnitude), position)
  }

  /// The first position at or after `start` that holds `<`, `&` or a carriage return (the end
  /// of plain character data), or the end of the document. Uses `memchr`, which looks at many
  /// bytes at a time: first for `<`, then for the other two before it.
  func plainTextEnd(from start: Int) -> Int {
    guard start >= 0, start < bytes.count, let base = bytes.baseAddress else {
      return max(start, bytes.count)
    }
    func find(_ byte: UInt8, before end: Int) -> Int {
      guard let found = memchr(base + start, Int32(byte), end - start) else { return end }
      return start + UnsafeRawPointer(base + start).distance(to: UnsafeRawPointer(found))
    }
    var end = find(UInt8(ascii: "<"), before: bytes.count)
    end = find(UInt8(ascii: "&"), before: end)
    return find(0x0D, before: end)
  }

  /// Moves past `literal` when the document continues with it.
  @inline(__always)
  mutating func skip(_ literal: StaticString) -> Bool {
    guard starts(with: literal) else { return false }
    index += literal.utf8CodeUnitCount
    return true
  }

  /// Moves past `literal` when the document continues with it; never past an empty one.
  mutating func skip(_ literal: [UInt8]) -> Bool {
    guard !literal.isEmpty, index >= 0, literal.count <= bytes.count - index, let base = bytes.baseAddress
    else {
      return false
    }
    let equal = literal.withUnsafeBufferPointer { pattern in
      pattern.baseAddress.map { memcmp(base + index, $0, pattern.count) == 0 } ?? false
    }
    guard equal else { return false }
    index += literal.count
    return true
  }

  /// Character data up to the closing tag, with entities and character references resolved.
  mutating func text(closing name: Name) throws -> String {
    // Plain text (no markup, entities or carriage returns) becomes a string directly.
    let start = index
    let position = plainTextEnd(from: index)
    if position + 1 < bytes.count, bytes[position] == UInt8(ascii: "<"),
      bytes[position + 1] == UInt8(ascii: "/")
    {
      index = position
      let tag = try readTag()
      guard tag.isClosing, tag.name == name else { throw fail("expected </\(name.text)>") }
      return String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<position]), as: UTF8.self)
    }
    index = start
    return try slowText(closing: name)
  }

  private mutating func slowText(closing name: Name) throws -> String {
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
        guard tag.isClosing, tag.name == name else { throw fail("expected </\(name.text)>") }
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
    throw fail("unterminated <\(name.text)>")
  }

  private mutating func appendEntity(into out: inout [UInt8]) throws {
    var end = index + 1
    while end < bytes.count, end - index < 12, bytes[end] != UInt8(ascii: ";") { end += 1 }
    guard end < bytes.count, bytes[end] == UInt8(ascii: ";") else { throw fail("unterminated entity") }
    let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[(index + 1)..<end]), as: UTF8.self)
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
