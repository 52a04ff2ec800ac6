@_spi(Backend) import Coffer
import Foundation

/// The names and values the differential check draws from: hostile on purpose, at every kind's
/// edges, with small pools for ids and indexed fields so that duplicates and unique clashes
/// happen often.
enum DifferentialValues {
  /// Text that stands for a secret: some stored strings, bytes and documents hold it (never an
  /// id, which errors name on purpose), and no error or log line may ever show it.
  static let secret = "S3CR3T-d1ff"

  /// Entity and field names: Unicode, quotes, spaces, SQL keywords, LIKE and GLOB wildcards,
  /// names that differ only by case or by Unicode normalization.
  static let names: [String] = [
    "id", "ID", "a", "A", "b", "value", "select", "SELECT", "order", "group", "table", "from", "where",
    "key", "index", "rowid", "_rowid_", "oid", "sqlite_x", "coffer_schema", "%", "_", "*", "a%b", "a_b",
    "a*b", "\"", "\"\"", "'", "'; DROP TABLE x; --", "a b", " ", " lead", "trail ", "[x]", "`x`", "$1", "?",
    "\u{E9}", "e\u{301}", "\u{3A9}", "\u{2126}", "\u{1F600}", "\u{10FFFF}", "na\u{EF}ve", "\u{65E5}\u{672C}",
    "x.y", "x,y", "x:y", "a\\b", "\t", "NULL", "null", "true",
  ]

  static let ints: [Value] = [
    0, 1, -1, 2, .int(.min), .int(.max), .int(.min + 1), .int(.max - 1), 42, -42, .int(1 << 53),
    .int((1 << 53) + 1),
  ]
  static let doubles: [Value] = [
    .double(-0.0), 0.0, 1.5, -1.5, .double(.infinity), .double(-.infinity), .double(.leastNonzeroMagnitude),
    .double(-.leastNonzeroMagnitude), .double(.greatestFiniteMagnitude), .double(-.greatestFiniteMagnitude),
    0.1, 1e-300, 9_007_199_254_740_993.0, 2.0,
  ]
  /// Strings small enough to be ids and indexed values on every backend: LMDB keys hold 511
  /// bytes, and an index has up to three fields, so the longest is 160 bytes (three of them, with
  /// the key encoding's separators, still fit; 300 did not, seed 7770132).
  static let keyStrings: [Value] = [
    "", "a", "A", "b", "ab", "\u{E9}", "e\u{301}", "%", "_", "*", "a%b", "a_b", "\u{0}", "a\u{0}b",
    "\u{1F600}", "\u{10FFFF}", "'", "\"", "SELECT", " ", "z", "\u{FFFF}", "\u{7F}", "a\nb", "Z", "\u{E000}",
    .string(String(repeating: "k", count: 160)), .string("k" + secret),
  ]
  /// Strings only non-indexed fields get: tens of kilobytes.
  static let hugeStrings: [Value] = [
    .string(String(repeating: "x", count: 70_000) + "\u{E9}"),
    .string(String(repeating: "\u{1F600}", count: 20_000)),
  ]
  static let keyBytes: [Value] = [
    Data(), Data([0]), Data([0, 1]), Data([1]), Data([0xFF]), Data([0xFF, 0]), Data(secret.utf8),
  ]
  .map { .bytes($0) }
  static let hugeBytes: [Value] = [.bytes(Data((0..<70_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }))]
  static let dates: [Value] =
    dateMicroseconds.map { .date(Value.date(microsecondsSince1970: $0)) } + [
      .date(.distantPast), .date(.distantFuture), .date(Date(timeIntervalSince1970: 0.000_000_4)),
      .date(Date(timeIntervalSince1970: -0.000_000_6)),
    ]
  static let dateMicroseconds: [Int64] = [
    0, 1, -1, 1_700_000_000_123_456, -1_000_001, 253_402_300_799_999_999, -62_135_596_800_000_000,
    9_007_199_254_740_993, 4_102_444_800_000_001,
  ]
  static let uuids: [Value] = [
    uuid(0, last: 0), uuid(0, last: 1), uuid(0x80, last: 0), uuid(0xFF, last: 0xFF), uuid(0x7F, last: 0x80),
    uuid(0x01, last: 0xFE),
  ].map { .uuid($0) }
  /// Documents: canonical JSON as Coffer encodes nested values, nested, with NUL and non-BMP text.
  static let documents: [Value] = [
    "{}", "[]", "null", "\"+Infinity\"", "{\"a\":[1,2,{\"b\":null}],\"c\":\"\\u0000\u{1F600}\"}",
    "[{\"\":\"\"},[[]],-0.0,1e300]", "{\"e\u{301}\":1,\"\u{E9}\":2}",
    String(repeating: "[", count: 64) + String(repeating: "]", count: 64), "{\"\(secret)\":\"\(secret)\"}",
  ].map { .document(Data($0.utf8)) }
  static let hugeDocuments: [Value] = [
    .document(Data(("[" + (0..<8_000).map { "\"\($0)\u{E9}\"" }.joined(separator: ",") + "]").utf8))
  ]

  static let intIDs: [Value] = [0, 1, 2, 3, 4, 5, -1, .int(.min), .int(.max)]
  static let stringIDs: [Value] = [
    "", "a", "A", "\u{E9}", "e\u{301}", "%", "_", "\u{1F600}", "a\u{0}b", "'", " ",
  ]
  static let uuidIDs: [Value] = uuids

  /// Every value of a kind; `key` leaves out the huge ones (ids and indexed fields).
  static func pool(_ kind: FieldKind, key: Bool) -> [Value] {
    switch kind {
    case .bool: [true, false]
    case .int: ints
    case .double: doubles
    case .string: key ? keyStrings : keyStrings + hugeStrings
    case .bytes: key ? keyBytes : keyBytes + hugeBytes
    case .date: dates
    case .uuid: uuids
    case .document: key ? documents : documents + hugeDocuments
    }
  }

  /// The ids of an entity whose id field is of `kind`.
  static func ids(_ kind: FieldKind) -> [Value] {
    switch kind {
    case .string: stringIDs
    case .uuid: uuidIDs
    default: intIDs
    }
  }

  /// A few values of a kind, so that equal values (and unique clashes) are common.
  static func small(_ kind: FieldKind) -> [Value] {
    switch kind {
    case .bool: [true, false]
    case .int: [0, 1, 2]
    case .double: [.double(-0.0), 0.0, 1.5]
    case .string: ["a", "A", "\u{E9}", "e\u{301}"]
    case .bytes: [.bytes(Data()), .bytes(Data([0]))]
    case .date: Array(dates.prefix(3))
    case .uuid: Array(uuids.prefix(2))
    case .document: Array(documents.prefix(2))
    }
  }

  /// The first line `log` captured that shows ``secret``, with it masked, if any does.
  static func leak(in log: LogCapture) -> String? {
    log.lines.lazy.map(\.text).first { $0.contains(secret) }?
      .replacingOccurrences(of: secret, with: "<stored value>")
  }

  static func uuid(_ first: UInt8, last: UInt8) -> UUID {
    UUID(uuid: (first, 0, 0, 0, 0, 0, 0x40, 0, 0x80, 0, 0, 0, 0, 0, 0, last))
  }
}
