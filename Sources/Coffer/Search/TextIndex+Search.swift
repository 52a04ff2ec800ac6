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
  /// Answers a search, reading the text of a row (for a phrase, whose words' order the index
  /// does not keep) with `text`, only for the rows that hold all the phrase's words.
  func answer(_ query: TextQuery, ranking: Bool, text: (Value) -> String?) -> TextIndexAnswer {
    let perTerm = query.terms.map { occurrences(of: $0, text: text) }
    var answer = TextIndexAnswer(
      statistics: statistics, documentFrequency: perTerm.map(\.count), listed: [],
      occurrences: TextOccurrences(terms: query.terms.count))
    let matchesEmpty = query.matches(counts: Array(repeating: 0, count: query.terms.count))
    if perTerm.count == 1, let only = perTerm.first {
      // One term: each row it occurs in matches unless the query is `NOT term`.
      if ranking {
        answer.occurrences.ids.reserveCapacity(only.count)
        answer.occurrences.lengths.reserveCapacity(only.count)
        answer.occurrences.counts.reserveCapacity(only.count)
      }
      answer.listed.reserveCapacity(only.count)
      let listsMatches = query.matches(counts: [1]) != matchesEmpty
      for (slot, count) in only {
        let id = ids[Int(slot)]
        if listsMatches { answer.listed.append(id) }
        if ranking {
          answer.occurrences.append(id: id, length: Int(lengths[Int(slot)]), counts: [Int(count)])
        }
      }
      return answer
    }
    var rows: [Int32: [Int]] = [:]
    for (term, found) in perTerm.enumerated() {
      for (slot, count) in found {
        rows[slot, default: Array(repeating: 0, count: perTerm.count)][term] = Int(count)
      }
    }
    for (slot, counts) in rows {
      let id = ids[Int(slot)]
      if query.matches(counts: counts) != matchesEmpty { answer.listed.append(id) }
      if ranking { answer.occurrences.append(id: id, length: Int(lengths[Int(slot)]), counts: counts) }
    }
    return answer
  }

  /// The rows a term occurs in, with how many times.
  func occurrences(of term: TextQuery.Term, text: (Value) -> String?) -> [Int32: Int32] {
    guard let last = term.tokens.last else { return [:] }
    if term.tokens.count == 1 { return term.prefix ? prefixed(last) : postings[last] ?? [:] }
    // A phrase: the rows holding every word, then the phrase counted in each one's words.
    var candidates = term.prefix ? prefixed(last) : postings[last] ?? [:]
    for word in term.tokens.dropLast() {
      guard let rows = postings[word] else { return [:] }
      if rows.count < candidates.count {
        candidates = rows.filter { candidates[$0.key] != nil }
      } else {
        candidates = candidates.filter { rows[$0.key] != nil }
      }
      if candidates.isEmpty { return [:] }
    }
    var found: [Int32: Int32] = [:]
    for slot in candidates.keys {
      guard let text = text(ids[Int(slot)]) else { continue }
      let count = term.occurrences(in: TextTokenizer.tokens(text))
      if count > 0 { found[slot] = Int32(count) }
    }
    return found
  }

  /// The rows with a word that starts with `prefix`, each with how many such words it has: a
  /// walk over the words, not the rows.
  private func prefixed(_ prefix: TextToken) -> [Int32: Int32] {
    var found: [Int32: Int32] = [:]
    for (word, rows) in postings where word.hasPrefix(prefix) {
      if found.isEmpty {
        found = rows
        continue
      }
      for (slot, count) in rows { found[slot, default: 0] += count }
    }
    return found
  }
}
