/// A parsed full-text query: the second argument of ``Filter/matches(field:query:)``.
///
/// The syntax, with `AND` binding tighter than `OR` and `NOT` tightest:
///
/// - `word` — a row whose text has the word (after the folding of ``TextTokenizer``).
/// - `swif*` — a row with a word that starts with `swif`.
/// - `"exact words"` — the words next to each other in this order.
/// - `a b`, `a AND b` — both; `a OR b` — either; `NOT a` — not `a`; `( … )` groups.
///
/// Operators are the upper-case words `AND`, `OR` and `NOT` (lower-case `and` is a word to
/// find). A query word that folds into several words (`e-mail`, `東京`) is searched as a
/// phrase. A query word that folds into none (`--`) is ignored.
package struct TextQuery: Hashable, Sendable {
  /// One thing to look for: one word, or several in a row (a phrase); the last may be a prefix.
  package struct Term: Hashable, Sendable {
    /// The folded words, in order; never empty.
    package var tokens: [TextToken]
    /// Whether the last word matches any word that starts with it.
    package var prefix: Bool

    /// How many times the term occurs in a text's words.
    package func occurrences(in words: [TextToken]) -> Int {
      guard words.count >= tokens.count else { return 0 }
      var count = 0
      let last = tokens.count - 1
      for start in 0...(words.count - tokens.count) {
        var found = true
        for offset in 0..<last where words[start + offset] != tokens[offset] {
          found = false
          break
        }
        guard found else { continue }
        let word = words[start + last]
        if prefix ? word.hasPrefix(tokens[last]) : word == tokens[last] { count += 1 }
      }
      return count
    }
  }

  /// The query's structure over term numbers (positions in ``terms``).
  package indirect enum Node: Hashable, Sendable {
    case term(Int)
    case and([Node])
    case or([Node])
    case not(Node)
  }

  /// The distinct terms, in the order they first appear.
  package var terms: [Term]
  /// The structure.
  package var root: Node

  /// Whether a text whose term counts are `counts` (one per ``terms`` entry) matches.
  package func matches(counts: [Int]) -> Bool { Self.evaluate(root, counts) }

  private static func evaluate(_ node: Node, _ counts: [Int]) -> Bool {
    switch node {
    case .term(let index): counts[index] > 0
    case .and(let parts): parts.allSatisfy { evaluate($0, counts) }
    case .or(let parts): parts.contains { evaluate($0, counts) }
    case .not(let inner): !evaluate(inner, counts)
    }
  }

  /// The numbers of the terms not under an odd number of `NOT`s: the ones relevance counts.
  package var positiveTerms: [Int] {
    var found: [Int] = []
    func visit(_ node: Node, negated: Bool) {
      switch node {
      case .term(let index): if !negated && !found.contains(index) { found.append(index) }
      case .and(let parts), .or(let parts): for part in parts { visit(part, negated: negated) }
      case .not(let inner): visit(inner, negated: !negated)
      }
    }
    visit(root, negated: false)
    return found.sorted()
  }

  /// Whether the text matches: tokenizes it and counts every term.
  package func matches(_ text: String) -> Bool {
    let words = TextTokenizer.tokens(text)
    return matches(counts: terms.map { $0.occurrences(in: words) })
  }
}
