@_spi(Backend) import Coffer
import Foundation

/// Words the randomized search check builds texts and queries from: case and diacritic
/// variants, prefixes of one another, CJK letters and numbers.
let searchVocabulary = [
  "apple", "Äpple", "APPLY", "apples", "bird", "birds", "café", "CAFE", "naïve", "east", "東", "京", "x1", "42",
  "ﬁre", "fire", "swift", "Swift",
]
let searchSeparators = [" ", " ", ", ", "-", "'", "\u{0}", " \u{1F426} ", "\u{3000}"]

/// Checks that random texts and queries select, count and rank as the suite's reference does.
func randomSearchCheck(_ context: CheckContext, seed: UInt64) async throws {
  var random = SplitMix64(seed: seed ^ 0x5EA7C4)
  func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }
  func chance(_ percent: UInt64) -> Bool { random.next() % 100 < percent }

  var texts: [String?] = []
  for _ in 0..<80 {
    if chance(8) {
      texts.append(nil)
      continue
    }
    var text = ""
    for index in 0..<Int(random.next() % 9) {
      if index > 0 { text += pick(searchSeparators) }
      text += pick(searchVocabulary)
    }
    texts.append(text)
  }
  let cells = texts.enumerated().map {
    Cell(id: Int64($0.offset + 1), text: $0.element, double: Double($0.offset % 3))
  }
  let store = try await context.store(with: cells)

  func term() -> String {
    switch random.next() % 6 {
    case 0:
      let word = pick(searchVocabulary)
      return String(word.prefix(1 + Int(random.next() % 3))) + "*"
    case 1: return "\"\(pick(searchVocabulary)) \(pick(searchVocabulary))\""
    default: return pick(searchVocabulary)
    }
  }
  func query(depth: Int) -> String {
    guard depth < 3, chance(55) else { return chance(15) ? "NOT " + term() : term() }
    let left = query(depth: depth + 1)
    let right = query(depth: depth + 1)
    let joined: String
    switch random.next() % 4 {
    case 0: joined = "\(left) OR \(right)"
    case 1: joined = "\(left) AND \(right)"
    case 2: joined = "\(left) \(right)"
    default: joined = "\(left) NOT \(right)"
    }
    return chance(40) ? "(\(joined))" : joined
  }

  for _ in 0..<40 {
    let text = query(depth: 0)
    let filtered = store.query(Cell.self).filter(FieldRef("text").matches(text))
    guard let parsed = SearchReference.parse(text) else {
      _ = try await expectThrows(.invalidQuery, "query \(text.debugDescription)") {
        try await filtered.fetch()
      }
      continue
    }
    let expected = texts.indices.filter { SearchReference.matches(parsed, texts[$0]) }.map { Int64($0 + 1) }
    try await expectIDs(filtered, expected, "ids matching \(text.debugDescription) (seed \(seed))")
    try expectEqual(try await filtered.count(), expected.count, "count matching \(text.debugDescription)")
    let ranked = referenceOrder(text, texts)
    try await expectIDs(
      filtered.sort([.relevance("text")]), ranked,
      "ids by relevance to \(text.debugDescription) (seed \(seed))")
    let page = Array(ranked.dropFirst(3).prefix(5))
    try await expectIDs(
      filtered.sort([.relevance("text")]).offset(3).limit(5), page,
      "page by relevance to \(text.debugDescription)")
    try await expectIDs(
      filtered.filter(FieldRef("double") == 1.0), expected.filter { $0 % 3 == 2 },
      "ids matching \(text.debugDescription) with double 1")
  }
}
