@_spi(Backend) import Coffer
import Foundation
import Testing

@testable import CofferLMDB

@Suite struct KeyEncodingTests {
  static let samples: [FieldKind: [Value]] = [
    .bool: [false, true],
    .int: [.int(.min), -300, -1, 0, 1, 255, 256, 70_000, .int(.max)],
    .double: [
      .double(-.infinity), -1e300, -2.5, -1.0, .double(-Double.leastNonzeroMagnitude), .double(-0.0), 0.0,
      .double(Double.leastNonzeroMagnitude), 1.0, 2.5, 1e300, .double(.infinity),
    ],
    .string: [
      "", "\u{0}", "\u{0}\u{0}", "\u{0}a", "a", "a\u{0}", "a\u{0}b", "ab", "b", "é", "e\u{301}", "😀",
      "\u{FFFF}",
    ],
    .bytes: [
      .bytes(Data()), .bytes(Data([0])), .bytes(Data([0, 0])), .bytes(Data([0, 255])), .bytes(Data([1])),
      .bytes(Data([255])),
    ],
    .date: [-1_000_001, -1, 0, 1, 1_700_000_000_123_456].map { .date(Value.date(microsecondsSince1970: $0)) },
    .uuid: [
      "00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000001",
      "10000000-0000-0000-0000-000000000000", "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF",
    ].map { .uuid(UUID(uuidString: $0)!) },
  ]

  @Test(arguments: Array(samples.keys))
  func keysOfOneKindSortAsValueOrder(kind: FieldKind) throws {
    let values = [Value.null] + (Self.samples[kind] ?? [])
    for a in values {
      for b in values {
        var x: [UInt8] = []
        var y: [UInt8] = []
        KeyEncoding.appendComponent(a, to: &x)
        KeyEncoding.appendComponent(b, to: &y)
        let keyOrder = x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1)
        #expect(keyOrder == ValueOrder.compare(a, b), "\(a) vs \(b)")
      }
    }
  }

  @Test func compoundKeysSortByFirstFieldThenSecond() {
    let pairs: [(Value, Value)] = [("a", 2), ("a", 10), ("a\u{0}", 1), ("ab", .null), ("ab", -5), ("b", 0)]
    let keys = pairs.map { pair -> [UInt8] in
      var key: [UInt8] = []
      KeyEncoding.appendComponent(pair.0, to: &key)
      KeyEncoding.appendComponent(pair.1, to: &key)
      return key
    }
    #expect(keys == keys.sorted { $0.lexicographicallyPrecedes($1) })
  }

  @Test(arguments: [FieldKind.int, .string, .uuid])
  func idKeysDecodeToTheirIDs(kind: FieldKind) {
    for value in Self.samples[kind] ?? [] {
      let key = KeyEncoding.idKey(value)
      #expect(key.withUnsafeBytes { KeyEncoding.decodeID($0, kind: kind) } == value)
      #expect(KeyEncoding.withIDKey(value) { Array($0) } == key)
    }
  }

  @Test func stringPrefixBoundsCoverExactlyTheStringsWithThatPrefix() throws {
    let strings = (Self.samples[.string] ?? []).compactMap { value -> String? in
      if case .string(let text) = value { return text }
      return nil
    }
    for prefix in strings {
      var lower: [UInt8] = []
      KeyEncoding.appendPrefix(prefix, to: &lower)
      let upper = KeyEncoding.successor(of: lower)
      for text in strings {
        let key = KeyEncoding.idKey(.string(text))
        let inside =
          !key.lexicographicallyPrecedes(lower) && (upper.map { key.lexicographicallyPrecedes($0) } ?? true)
        #expect(inside == text.utf8.starts(with: prefix.utf8), "\(text) / prefix \(prefix)")
      }
    }
  }

  @Test func negativeZeroAndZeroShareAKey() {
    #expect(KeyEncoding.idKey(.double(-0.0)) == KeyEncoding.idKey(.double(0.0)))
  }
}
