import Foundation

/// How SQLite compares and chooses identifiers for entity and field names, which may hold any
/// Unicode text (quoting is ``CofferSQL/SQLIdentifier``'s).
enum SQLiteIdentifier {
  /// The form SQLite compares identifiers in: ASCII letters folded to lower case, every other
  /// character kept (SQLite folds only ASCII).
  static func folded(_ name: String) -> String {
    String(
      decoding: name.utf8.map { (0x41...0x5A).contains($0) ? $0 + 0x20 : $0 }, as: UTF8.self)
  }

  /// A name for a new table or column: `wanted` itself when SQLite would not confuse it with a
  /// name in `taken` (compared folded), else `wanted_2`, `wanted_3`, … NUL characters, which
  /// SQL text cannot hold, become `_`; names SQLite reserves (`sqlite_…`) get a `coffer_` prefix.
  static func fresh(for wanted: String, avoiding taken: Set<String>) -> String {
    var base = wanted.replacingOccurrences(of: "\u{0}", with: "_")
    if folded(base).hasPrefix("sqlite_") { base = "coffer_" + base }
    var candidate = base
    var suffix = 2
    while taken.contains(folded(candidate)) {
      candidate = "\(base)_\(suffix)"
      suffix += 1
    }
    return candidate
  }
}
