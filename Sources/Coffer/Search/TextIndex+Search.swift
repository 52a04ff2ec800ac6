/// What a text index knows of one search (``Filter/matches(field:query:)``) on its field:
/// everything ``TextSearch`` would otherwise learn by reading every row.
package struct TextIndexAnswer: Sendable {
  /// The field's statistics over the entity's rows.
  package var statistics: TextRanking.FieldStatistics
  /// In how many rows each term of the query occurs.
  package var documentFrequency: [Int]
  /// The rows in which some term occurs that match the query (or, when the query matches a
  /// text with none of its terms, that do not).
  package var listed: [Value]
  /// For ranking (when asked for): each row in which some term occurs, with its length in words
  /// and each term's count.
  package var occurrences: TextOccurrences

  /// An answer from its parts.
  package init(
    statistics: TextRanking.FieldStatistics, documentFrequency: [Int], listed: [Value],
    occurrences: TextOccurrences
  ) {
    self.statistics = statistics
    self.documentFrequency = documentFrequency
    self.listed = listed
    self.occurrences = occurrences
  }
}

/// Rows with their lengths in words and each term's count, as parallel arrays: a row is one
/// entry of ``ids`` and ``lengths`` and ``terms`` entries of ``counts``.
package struct TextOccurrences: Sendable {
  /// How many terms each row has a count of.
  package let terms: Int
  /// The rows' ids.
  package var ids: [Value] = []
  /// The rows' lengths in words.
  package var lengths: [Int] = []
  /// The counts, row after row.
  package var counts: [Int] = []
  /// Whether every row here is known to match the query (an index listed only those), so a
  /// reader need not evaluate it per row.
  package var allMatch = false

  package init(terms: Int) { self.terms = terms }

  /// Adds a row.
  package mutating func append(id: Value, length: Int, counts rowCounts: [Int]) {
    ids.append(id)
    lengths.append(length)
    counts.append(contentsOf: rowCounts)
  }

  /// How many rows there are.
  package var count: Int { ids.count }
}

/// A snapshot of a backend (or the backend itself) that answers searches from its text indexes.
package protocol TextIndexReading: Sendable {
  /// What the text index on `field` of `entity` knows of `query`, or `nil` when the entity has
  /// no text index on the field (the search then reads the rows). `ranking` asks for
  /// ``TextIndexAnswer/occurrences``; with `matchingOnly`, only those of the rows that match
  /// the query are needed (a page ranked by this search alone reads no other row), and a reader
  /// may leave out the others.
  func searchTextIndex(entity: String, field: String, query: TextQuery, ranking: Bool, matchingOnly: Bool)
    throws -> TextIndexAnswer?

  /// Whether the reader's own reads evaluate ``Filter/matches(field:query:)`` from the text
  /// index (a SQL engine's full-text table): a search then keeps its `matches` in the query it
  /// reads with, asks the index only for ranking, and leaves ``TextIndexAnswer/listed`` unread.
  var evaluatesMatchesFromIndex: Bool { get }
}

extension TextIndexReading {
  /// A reader answers `matches` through ``TextIndexAnswer/listed`` unless it says otherwise.
  package var evaluatesMatchesFromIndex: Bool { false }
}

/// A backend whose snapshots (``SnapshotReading``) are ``TextIndexReading``: a search runs on
/// one snapshot, so the index and the rows it reads agree.
package protocol TextIndexSnapshots: SnapshotReading {}

extension TextIndex {
  /// The live rows a term occurs in: slots in increasing order, and how many times in each.
  struct TermRows {
    var slots: [Int32] = []
    var counts: [Int32] = []
  }

  /// Answers a search, reading the text of a row (for a phrase, whose words' order the index
  /// does not keep) with `text`, only for the rows that hold all the phrase's words. With
  /// `matchingOnly`, a query that is a conjunction of terms lists and counts only the rows
  /// holding every term (an intersection of sorted arrays); any other merges every term's rows.
  func answer(_ query: TextQuery, ranking: Bool, matchingOnly: Bool = false, text: (Value) -> String?)
    -> TextIndexAnswer
  {
    let perTerm = query.terms.map { rows(of: $0, text: text) }
    var answer = TextIndexAnswer(
      statistics: statistics, documentFrequency: perTerm.map(\.slots.count), listed: [],
      occurrences: TextOccurrences(terms: query.terms.count))
    if perTerm.isEmpty { return answer }
    let matchesEmpty = query.matches(counts: Array(repeating: 0, count: query.terms.count))
    var counts = Array(repeating: 0, count: perTerm.count)
    func add(_ slot: Int32) {
      let id = ids[Int(slot)]
      if query.matches(counts: counts) != matchesEmpty { answer.listed.append(id) }
      if ranking { answer.occurrences.append(id: id, length: Int(lengths[Int(slot)]), counts: counts) }
    }
    if matchingOnly, Self.isConjunction(query.root) {
      // Every row holding every term matches a conjunction: no need to evaluate it per row.
      answer.occurrences.allMatch = true
      intersect(perTerm) { slot, found in
        for term in counts.indices { counts[term] = Int(found[term]) }
        let id = ids[Int(slot)]
        answer.listed.append(id)
        if ranking { answer.occurrences.append(id: id, length: Int(lengths[Int(slot)]), counts: counts) }
      }
      return answer
    }
    // Every row some term occurs in, in slot order: a merge of the terms' sorted rows.
    var next = Array(repeating: 0, count: perTerm.count)
    while true {
      var slot = Int32.max
      for term in perTerm.indices where next[term] < perTerm[term].slots.count {
        slot = Swift.min(slot, perTerm[term].slots[next[term]])
      }
      if slot == .max { break }
      for term in perTerm.indices {
        if next[term] < perTerm[term].slots.count, perTerm[term].slots[next[term]] == slot {
          counts[term] = Int(perTerm[term].counts[next[term]])
          next[term] += 1
        } else {
          counts[term] = 0
        }
      }
      add(slot)
    }
    return answer
  }

  /// Whether a query is one term, or an AND of terms.
  static func isConjunction(_ node: TextQuery.Node) -> Bool {
    switch node {
    case .term: true
    case .and(let parts): !parts.isEmpty && parts.allSatisfy { if case .term = $0 { true } else { false } }
    case .or, .not: false
    }
  }

  /// Hands `body` each slot every list holds, in order, with its count in each list: the
  /// shortest list leads, and the others are searched forward from where they were.
  func intersect(_ lists: [TermRows], _ body: (Int32, [Int32]) -> Void) {
    guard let shortest = lists.indices.min(by: { lists[$0].slots.count < lists[$1].slots.count }) else {
      return
    }
    var next = Array(repeating: 0, count: lists.count)
    var found = Array(repeating: Int32(0), count: lists.count)
    candidates: for (position, slot) in lists[shortest].slots.enumerated() {
      found[shortest] = lists[shortest].counts[position]
      for list in lists.indices where list != shortest {
        let slots = lists[list].slots
        let start = Self.firstIndex(in: slots, notBelow: slot, from: next[list])
        next[list] = start
        guard start < slots.count else { return }
        guard slots[start] == slot else { continue candidates }
        found[list] = lists[list].counts[start]
      }
      body(slot, found)
    }
  }

  /// The first index at or after `start` whose slot is at least `slot` (`slots.count` when none
  /// is): a gallop, then a binary search.
  static func firstIndex(in slots: [Int32], notBelow slot: Int32, from start: Int) -> Int {
    var low = start
    var step = 1
    var high = start
    while high < slots.count && slots[high] < slot {
      low = high + 1
      high += step
      step *= 2
    }
    high = Swift.min(high, slots.count)
    while low < high {
      let middle = (low + high) / 2
      if slots[middle] < slot { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// A word's live rows.
  func rows(ofWord word: TextToken) -> TermRows {
    guard let number = words[word] else { return TermRows() }
    let list = postings[Int(number)]
    if list.dead == 0 { return TermRows(slots: list.slots, counts: list.counts) }
    var live = TermRows()
    live.slots.reserveCapacity(list.slots.count - list.dead)
    live.counts.reserveCapacity(list.slots.count - list.dead)
    for (slot, count) in zip(list.slots, list.counts) where isLive(slot) {
      live.slots.append(slot)
      live.counts.append(count)
    }
    return live
  }

  /// The rows a term occurs in, with how many times.
  func rows(of term: TextQuery.Term, text: (Value) -> String?) -> TermRows {
    guard let last = term.tokens.last else { return TermRows() }
    let lastRows = term.prefix ? prefixed(last) : rows(ofWord: last)
    if term.tokens.count == 1 { return lastRows }
    // A phrase: the rows holding every word, then the phrase counted in each one's words.
    var lists = term.tokens.dropLast().map { rows(ofWord: $0) }
    lists.append(lastRows)
    var found = TermRows()
    intersect(lists) { slot, _ in
      guard let text = text(ids[Int(slot)]) else { return }
      let count = term.occurrences(in: TextTokenizer.tokens(text))
      if count > 0 {
        found.slots.append(slot)
        found.counts.append(Int32(count))
      }
    }
    return found
  }

  /// The rows with a word that starts with `prefix`, each with how many such words it has: a
  /// walk over the words, not the rows, merging their sorted rows.
  private func prefixed(_ prefix: TextToken) -> TermRows {
    var found = TermRows()
    for (word, _) in words where word.hasPrefix(prefix) {
      let more = rows(ofWord: word)
      if more.slots.isEmpty { continue }
      if found.slots.isEmpty {
        found = more
        continue
      }
      var merged = TermRows()
      merged.slots.reserveCapacity(found.slots.count + more.slots.count)
      merged.counts.reserveCapacity(found.slots.count + more.slots.count)
      var (left, right) = (0, 0)
      while left < found.slots.count || right < more.slots.count {
        let a = left < found.slots.count ? found.slots[left] : .max
        let b = right < more.slots.count ? more.slots[right] : .max
        var count: Int32 = 0
        if a <= b {
          count += found.counts[left]
          left += 1
        }
        if b <= a {
          count += more.counts[right]
          right += 1
        }
        merged.slots.append(Swift.min(a, b))
        merged.counts.append(count)
      }
      found = merged
    }
    return found
  }
}
