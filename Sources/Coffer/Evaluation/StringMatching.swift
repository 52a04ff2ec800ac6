/// Case-sensitive, byte-wise substring tests: the meaning of ``StringMatch`` everywhere.
enum StringMatching {
  static func matches(_ text: String, _ match: StringMatch, _ pattern: String) -> Bool {
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
        case .contains:
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
