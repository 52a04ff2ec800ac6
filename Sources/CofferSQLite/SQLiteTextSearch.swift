import CSQLite
@_spi(Backend) import Coffer
import CofferSQL
import Foundation

/// A ``Coffer/TextQuery`` as an FTS5 query on a ``SQLiteTextIndex``, whose words are Coffer's.
///
/// A term is a quoted FTS5 string of its words (`"structured concurrency"`), followed by `*`
/// when its last word is a prefix: FTS5's phrase and prefix mean what Coffer's do. FTS5 has no
/// NOT of its own, only `a NOT b`, so a query translates exactly when each NOT is one part of
/// an AND that has a part without one, and holds no NOT itself.
enum SQLiteTextQuery {
  /// The FTS5 query selecting exactly the rows `query` matches, and for each FTS5 phrase (in
  /// the order they are written) the number of the query's term it is; `nil` when FTS5 cannot
  /// say it.
  ///
  /// With `counting`, also `nil` unless FTS5 counts, in each row it selects, every occurrence of
  /// every term that is not under a NOT. It does not for a term in an AND under an OR, such as
  /// `swift` in `file OR (swift concurrency)` in a row with `file` and `swift` alone: FTS5
  /// reports a phrase's occurrences only where the AND above it holds.
  static func exact(_ query: TextQuery, counting: Bool = false) -> (expression: String, phraseTerms: [Int])? {
    var phraseTerms: [Int] = []
    func render(_ node: TextQuery.Node, allowingNot: Bool, underOr: Bool = false) -> String? {
      switch node {
      case .term(let number):
        phraseTerms.append(number)
        return phrase(query.terms[number])
      case .or(let parts):
        guard !parts.isEmpty else { return nil }
        var rendered: [String] = []
        for part in parts {
          guard let text = render(part, allowingNot: allowingNot, underOr: allowingNot) else { return nil }
          rendered.append("(\(text))")
        }
        return rendered.joined(separator: " OR ")
      case .and(let parts):
        if counting && underOr { return nil }
        var kept: [String] = []
        for part in parts {
          if case .not = part { continue }
          guard let text = render(part, allowingNot: allowingNot, underOr: underOr) else { return nil }
          kept.append("(\(text))")
        }
        guard !kept.isEmpty else { return nil }
        var excluded: [String] = []
        for part in parts {
          guard case .not(let inner) = part else { continue }
          guard allowingNot, let text = render(inner, allowingNot: false) else { return nil }
          excluded.append("(\(text))")
        }
        let all = kept.joined(separator: " AND ")
        return excluded.isEmpty ? all : "(\(all)) NOT (\(excluded.joined(separator: " OR ")))"
      case .not:
        return nil
      }
    }
    guard let expression = render(query.root, allowingNot: true) else { return nil }
    return (expression, phraseTerms)
  }

  /// The FTS5 query selecting the rows in which any term of `query` occurs, its phrases the
  /// terms in order; `nil` for a query without terms.
  static func anyTerm(_ query: TextQuery) -> String? {
    query.terms.isEmpty ? nil : query.terms.map(phrase).joined(separator: " OR ")
  }

  /// One term as an FTS5 phrase. A word holds no `"` (see ``SQLiteTextIndex``).
  static func phrase(_ term: TextQuery.Term) -> String {
    "\"" + term.tokens.map(\.text).joined(separator: " ") + "\"" + (term.prefix ? "*" : "")
  }
}

/// Gathers, row by row of an FTS5 query on a text index, what ranking needs: the row's id and
/// length and each term's count (through `coffer_text_collect`), and the table's statistics.
final class SQLiteTextCollector {
  /// For each FTS5 phrase, the term it counts.
  let phraseTerms: [Int]
  private(set) var occurrences: TextOccurrences
  private(set) var statistics = TextRanking.FieldStatistics()
  private var hasStatistics = false
  private var phraseCounts: [Int]
  private var termCounts: [Int]

  init(phraseTerms: [Int], terms: Int) {
    self.phraseTerms = phraseTerms
    occurrences = TextOccurrences(terms: terms)
    phraseCounts = Array(repeating: 0, count: phraseTerms.count)
    termCounts = Array(repeating: 0, count: terms)
  }

  /// Reads the current row of `fts`; an SQLite result code.
  func collect(_ api: UnsafePointer<Fts5ExtensionApi>, _ fts: OpaquePointer) -> Int32 {
    let functions = api.pointee
    guard let columnSize = functions.xColumnSize, let instCount = functions.xInstCount,
      let inst = functions.xInst, let rowid = functions.xRowid
    else { return SQLITE_MISUSE }
    if !hasStatistics {
      guard let rowCount = functions.xRowCount, let totalSize = functions.xColumnTotalSize else {
        return SQLITE_MISUSE
      }
      var rows: sqlite3_int64 = 0
      var words: sqlite3_int64 = 0
      var code = rowCount(fts, &rows)
      if code == SQLITE_OK { code = totalSize(fts, 0, &words) }
      guard code == SQLITE_OK else { return code }
      statistics.rows = Int(rows)
      statistics.words = Int(words)
      hasStatistics = true
    }
    guard !phraseTerms.isEmpty else { return SQLITE_OK }
    var length: Int32 = 0
    var instances: Int32 = 0
    var code = columnSize(fts, 0, &length)
    if code == SQLITE_OK { code = instCount(fts, &instances) }
    guard code == SQLITE_OK else { return code }
    for phrase in phraseCounts.indices { phraseCounts[phrase] = 0 }
    for term in termCounts.indices { termCounts[term] = 0 }
    var (phrase, column, offset): (Int32, Int32, Int32) = (0, 0, 0)
    for instance in 0..<instances {
      code = inst(fts, instance, &phrase, &column, &offset)
      guard code == SQLITE_OK else { return code }
      if phrase >= 0 && Int(phrase) < phraseCounts.count { phraseCounts[Int(phrase)] += 1 }
    }
    // A term written twice is two phrases with the same count.
    for (phrase, term) in phraseTerms.enumerated() {
      termCounts[term] = max(termCounts[term], phraseCounts[phrase])
    }
    occurrences.append(id: .int(rowid(fts)), length: Int(length), counts: termCounts)
    return SQLITE_OK
  }
}

extension SQLiteSnapshot: TextIndexReading {
  /// A read's `matches` on a text-indexed field is an FTS5 query (see ``SQLiteDialect``).
  var evaluatesMatchesFromIndex: Bool { true }

  /// The counts ranking needs, from the entity's FTS5 table on the field; `nil` when it has
  /// none. The rows are those the query matches (when FTS5 can say the query and only those
  /// are needed) or those in which any term occurs; ``Coffer/TextIndexAnswer/listed`` is empty.
  func searchTextIndex(entity: String, field: String, query: TextQuery, ranking: Bool, matchingOnly: Bool)
    throws -> TextIndexAnswer?
  {
    guard let table = backend.catalog.withLock({ $0.tables[entity] }),
      let index = SQLiteTextIndex.name(for: field, in: table.layout)
    else { return nil }
    return try lock.withLock {
      let fts = SQLIdentifier.quoted(index)
      let collect = "SELECT \(SQLiteTextIndex.collectFunction)(\(fts), ?2) FROM \(fts)"
      let terms = query.terms.count
      var answer = TextIndexAnswer(
        statistics: try collected(collect + " LIMIT 1", nil, SQLiteTextCollector(phraseTerms: [], terms: 0))
          .statistics,
        documentFrequency: Array(repeating: 0, count: terms), listed: [],
        occurrences: TextOccurrences(terms: terms))
      guard ranking else { return answer }
      if matchingOnly, let exact = SQLiteTextQuery.exact(query, counting: true) {
        let collector = SQLiteTextCollector(phraseTerms: exact.phraseTerms, terms: terms)
        answer.occurrences = try collected(collect + " WHERE \(fts) MATCH ?1", exact.expression, collector)
          .occurrences
        // FTS5 selected exactly the rows that match.
        answer.occurrences.allMatch = true
        let count = try reader.statement("SELECT count(*) FROM \(fts) WHERE \(fts) MATCH ?1")
        for term in query.positiveTerms {
          answer.documentFrequency[term] = try count.withBindings([
            .string(SQLiteTextQuery.phrase(query.terms[term]))
          ]) {
            try count.stepReading() ? Int(count.int(at: 0)) : 0
          }
        }
        return answer
      }
      guard let any = SQLiteTextQuery.anyTerm(query) else { return answer }
      let collector = SQLiteTextCollector(phraseTerms: Array(0..<terms), terms: terms)
      let rows = try collected(collect + " WHERE \(fts) MATCH ?1", any, collector).occurrences
      for row in 0..<rows.count {
        for term in 0..<terms where rows.counts[row * terms + term] > 0 {
          answer.documentFrequency[term] += 1
        }
      }
      answer.occurrences = rows
      return answer
    }
  }

  /// Runs `sql` (with the FTS5 query `expression` as `?1`, when given) with `collector` bound
  /// as `?2`, and returns the collector.
  private func collected(_ sql: String, _ expression: String?, _ collector: SQLiteTextCollector) throws
    -> SQLiteTextCollector
  {
    let statement = try reader.statement(sql)
    try withExtendedLifetime(collector) {
      try statement.withBindings(expression.map { [.string($0)] } ?? []) {
        let pointer = Unmanaged.passUnretained(collector).toOpaque()
        let code = sqlite3_bind_pointer(statement.handle, 2, pointer, cString(textCollectorPointerType), nil)
        guard code == SQLITE_OK else { throw reader.failure(code, while: "searching a text index") }
        while try statement.stepReading() {}
      }
    }
    return collector
  }
}

// Searches read one snapshot, whose text indexes rank them.
extension SQLiteBackend: TextIndexSnapshots {}
