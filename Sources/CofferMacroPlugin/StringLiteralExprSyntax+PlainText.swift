import SwiftSyntax

extension StringLiteralExprSyntax {
  /// The text of a string literal without interpolation or raw delimiters, its escapes
  /// (`\"`, `\\`, `\n`, `\t`, `\r`, `\0`, `\'`, `\u{…}`) resolved; otherwise `nil`.
  var plainText: String? {
    guard openingPounds == nil else { return nil }
    var text = ""
    for segment in segments {
      guard let plain = segment.as(StringSegmentSyntax.self) else { return nil }
      guard let resolved = Self.unescaped(plain.content.text) else { return nil }
      text += resolved
    }
    return text
  }

  private static func unescaped(_ source: String) -> String? {
    var result = ""
    var scalars = source.unicodeScalars.makeIterator()
    while let scalar = scalars.next() {
      guard scalar == "\\" else {
        result.unicodeScalars.append(scalar)
        continue
      }
      switch scalars.next() {
      case "\"": result += "\""
      case "\\": result += "\\"
      case "'": result += "'"
      case "n": result += "\n"
      case "t": result += "\t"
      case "r": result += "\r"
      case "0": result += "\0"
      case "u":
        guard scalars.next() == "{" else { return nil }
        var hex = ""
        while let digit = scalars.next(), digit != "}" { hex.unicodeScalars.append(digit) }
        guard let value = UInt32(hex, radix: 16), let decoded = Unicode.Scalar(value) else { return nil }
        result.unicodeScalars.append(decoded)
      default: return nil
      }
    }
    return result
  }
}
