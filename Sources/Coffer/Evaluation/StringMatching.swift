/// Byte-wise string tests: the meaning of ``StringMatch`` everywhere. The case-sensitive tests
/// compare UTF-8 bytes; the `…IgnoringCase` ones fold the ASCII letters of both sides first
/// (``StringMatch/foldingASCIICase(_:)``), then compare bytes the same way.
enum StringMatching {
  static func matches(_ text: String, _ match: StringMatch, _ pattern: String) -> Bool {
    switch match {
    case .contains, .hasPrefix, .hasSuffix:
      return bytesMatch(text, match, pattern)
    case .containsIgnoringCase:
      return bytesMatch(StringMatch.foldingASCIICase(text), .contains, StringMatch.foldingASCIICase(pattern))
    case .hasPrefixIgnoringCase:
      return bytesMatch(StringMatch.foldingASCIICase(text), .hasPrefix, StringMatch.foldingASCIICase(pattern))
    case .hasSuffixIgnoringCase:
      return bytesMatch(StringMatch.foldingASCIICase(text), .hasSuffix, StringMatch.foldingASCIICase(pattern))
    case .equalIgnoringCase:
      return ValueOrder.compareUTF8(StringMatch.foldingASCIICase(text), StringMatch.foldingASCIICase(pattern))
        == 0
    }
  }

  private static func bytesMatch(_ text: String, _ match: StringMatch, _ pattern: String) -> Bool {
    var haystack = text
    var needle = pattern
    return haystack.withUTF8 { h in
      needle.withUTF8 { n in
        if n.count > h.count { return false }
        if n.isEmpty { return true }
        switch match {
        case .hasPrefix:
          return ValueOrder.compareBuffers(UnsafeBufferPointer(rebasing: h[0..<n.count]), n) == 0
        case .hasSuffix:
          return ValueOrder.compareBuffers(UnsafeBufferPointer(rebasing: h[(h.count - n.count)...]), n) == 0
        default:
          let first = n[0]
          var start = 0
          let last = h.count - n.count
          while start <= last {
            if h[start] == first,
              ValueOrder.compareBuffers(UnsafeBufferPointer(rebasing: h[start..<(start + n.count)]), n) == 0
            {
              return true
            }
            start += 1
          }
          return false
        }
      }
    }
  }
}
