import Foundation

/// Writes XML property lists byte by byte, with no intermediate objects.
///
/// Strings that XML 1.0 cannot carry (most control characters, U+FFFE, U+FFFF) are written as
/// `<data>` holding their UTF-8 bytes; a carriage return is written as `&#13;` so that XML
/// line-end normalization does not turn it into a line feed.
struct XMLPlistWriter {
  static let header = Data(
    """
    <?xml version="1.0" encoding="UTF-8"?>
    <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
    <plist version="1.0">

    """.utf8)
  static let footer = Data("</plist>\n".utf8)

  var bytes: [UInt8] = []

  mutating func append(_ text: StaticString) {
    text.withUTF8Buffer { bytes.append(contentsOf: $0) }
  }

  mutating func indent(_ depth: Int) {
    for _ in 0..<depth { bytes.append(0x09) }
  }

  mutating func write(_ value: PlistValue, depth: Int) {
    indent(depth)
    switch value {
    case .dict(let entries):
      if entries.isEmpty {
        append("<dict/>\n")
        return
      }
      append("<dict>\n")
      for entry in entries {
        indent(depth + 1)
        writeKey(entry.key)
        write(entry.value, depth: depth + 1)
      }
      indent(depth)
      append("</dict>\n")
    case .array(let items):
      if items.isEmpty {
        append("<array/>\n")
        return
      }
      append("<array>\n")
      for item in items { write(item, depth: depth + 1) }
      indent(depth)
      append("</array>\n")
    case .string(let text): writeString(text)
    case .integer(let number):
      append("<integer>")
      bytes.append(contentsOf: String(number).utf8)
      append("</integer>\n")
    case .real(let number): writeReal(number)
    case .bool(let flag): flag ? append("<true/>\n") : append("<false/>\n")
    case .data(let data): writeData(data)
    case .date(let date):
      append("<date>")
      bytes.append(contentsOf: date.formatted(.iso8601).utf8)
      append("</date>\n")
    }
  }

  mutating func writeKey(_ key: String) {
    append("<key>")
    if Self.classify(key) == .plain { bytes.append(contentsOf: key.utf8) } else { escape(key) }
    append("</key>\n")
  }

  mutating func writeString(_ text: String) {
    switch Self.classify(text) {
    case .plain:
      append("<string>")
      bytes.append(contentsOf: text.utf8)
      append("</string>\n")
    case .needsEscaping:
      append("<string>")
      escape(text)
      append("</string>\n")
    case .notXML:
      writeData(Data(text.utf8))
    }
  }

  enum TextClass { case plain, needsEscaping, notXML }

  /// One pass over the UTF-8: whether the text can be copied as is, needs `&`, `<`, `>` or a
  /// carriage return escaped, or has characters XML 1.0 cannot carry at all.
  static func classify(_ text: String) -> TextClass {
    var result = TextClass.plain
    var previous: (UInt8, UInt8) = (0, 0)
    for byte in text.utf8 {
      switch byte {
      case 0x09, 0x0A: break
      case 0x0D, UInt8(ascii: "&"), UInt8(ascii: "<"), UInt8(ascii: ">"): result = .needsEscaping
      case 0..<0x20: return .notXML
      case 0xBE,
        0xBF where previous == (0xEF, 0xBF):
        return .notXML
      default: break
      }
      previous = (previous.1, byte)
    }
    return result
  }

  mutating func writeReal(_ number: Double) {
    append("<real>")
    if number.isInfinite {
      number > 0 ? append("inf") : append("-inf")
    } else {
      bytes.append(contentsOf: "\(number)".utf8)
    }
    append("</real>\n")
  }

  mutating func writeData(_ data: Data) {
    append("<data>")
    bytes.append(contentsOf: data.base64EncodedString().utf8)
    append("</data>\n")
  }

  mutating func escape(_ text: String) {
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "&"): append("&amp;")
      case UInt8(ascii: "<"): append("&lt;")
      case UInt8(ascii: ">"): append("&gt;")
      case 0x0D: append("&#13;")
      default: bytes.append(byte)
      }
    }
  }
}
