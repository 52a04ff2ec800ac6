/// Runs queries that search text (``Filter/matches(field:query:)``, ``Sort/relevance(_:)``) on
/// any backend, with the answers defined here: the one implementation of Coffer's search for
/// every backend that has none of its own.
///
/// Before such a query reaches the backend, one read over the entity's rows tokenizes the
/// searched fields and gathers BM25's statistics (``TextRanking``). A backend that evaluates
/// `matches` itself (``TextMatching``) then receives the query as it is; for any other, each
/// `matches` becomes a filter on the ids of the rows it selects. A relevance order is applied
/// here, over the rows the backend selects, so every backend ranks with the same `Double`s.
///
/// Where the entity has a text index on every searched field and the read is given an `index`
/// (``TextIndexReading``), the index answers in place of that read over every row, and each
/// `matches` becomes a filter on ids even for a backend that evaluates it; a page ordered by
/// relevance alone then reads only its rows (see `TextSearch+TopRanked.swift`).
package enum TextSearch {
  /// A read of rows: the backend's, a snapshot's or a transaction's.
  package typealias Reader = (Query, (any StoredFields) throws -> Void) async throws -> Void

  /// Whether a query searches text or sorts by relevance.
  package static func searches(_ query: Query) -> Bool {
    query.sort.contains(where: \.byRelevance) || query.filter.searchesText
  }

  /// Reads a checked query, searching text as ``TextSearch`` says.
  package static func read(
    _ query: Query, nativeMatching: Bool, index: (any TextIndexReading)? = nil,
    using reader: @escaping Reader,
    _ visit: (any StoredFields) throws -> Void
  ) async throws {
    guard searches(query) else { return try await reader(query, visit) }
    let resolved = try await resolve(query, nativeMatching: nativeMatching, index: index, using: reader)
    if let top = resolved.top, let limit = query.limit {
      return try await top.read(offset: query.offset, limit: limit, using: reader, visit)
    }
    guard let ordering = resolved.ordering else { return try await reader(resolved.query, visit) }
    var whole = resolved.query
    whole.offset = 0
    whole.limit = nil
    whole.sort = []
    var rows: [Row] = []
    try await reader(whole) { rows.append(try Row($0)) }
    rows.sort { ordering.compare($0, $1) < 0 }
    let start = min(query.offset, rows.count)
    let end = query.limit.map { start + min(rows.count - start, $0) } ?? rows.count
    try RowFields.handOver(Array(rows[start..<end]), to: visit)
  }

  /// A checked query whose filter the backend can evaluate: each `matches` resolved when the
  /// backend cannot evaluate it, relevance keys dropped (for counts and changes by query).
  package static func resolvingFilter(
    _ query: Query, nativeMatching: Bool, index: (any TextIndexReading)? = nil, using reader: @escaping Reader
  )
    async throws
    -> Query
  {
    guard searches(query) else { return query }
    var resolved = try await resolve(
      query, nativeMatching: nativeMatching, index: index, using: reader, ranking: false
    )
    .query
    resolved.sort = query.sort.filter { !$0.byRelevance }
    return resolved
  }

  /// How many rows a query whose filter is one search selects, from a text index alone; `nil`
  /// when the filter is anything else or the entity has no text index on the field.
  package static func indexedCount(_ query: Query, index: any TextIndexReading) throws -> Int? {
    guard !index.evaluatesMatchesFromIndex, let schema = query.layout,
      case .matches(let field, let text) = query.filter
    else { return nil }
    let parsed = try parse(text, field: field, schema: schema)
    guard
      let answer = try index.searchTextIndex(
        entity: query.entity, field: field, query: parsed, ranking: false, matchingOnly: false)
    else { return nil }
    // A query that matches a text with none of its terms lists the rows with a text it does not match.
    let matchesEmpty = parsed.matches(counts: Array(repeating: 0, count: parsed.terms.count))
    return matchesEmpty ? answer.statistics.rows - answer.listed.count : answer.listed.count
  }

  /// The query to hand the backend and, when it sorts by relevance, the order to apply.
  struct Resolution {
    var query: Query
    var ordering: RankedOrdering?
    /// When a text index answered and the query is ordered by relevance alone: its candidates in
    /// rank order, for reading a page without reading every match.
    var top: TopRanked?
  }

  /// One `matches` of a filter.
  struct Search {
    var field: String
    var position: Int
    var text: String
    var query: TextQuery
    /// Whether a row none of whose terms occur matches (a query such as `NOT draft`).
    var matchesEmpty: Bool
    /// The rows with a term count above zero that match (or, when ``matchesEmpty``, do not).
    var listed: [Value] = []
    /// In how many rows each term occurs.
    var documentFrequency: [Int]
    /// For ranking: each row with a term count above zero, its length and counts.
    var occurrences: TextOccurrences
  }

  static func resolve(
    _ query: Query, nativeMatching: Bool, index: (any TextIndexReading)? = nil,
    using reader: @escaping Reader,
    ranking: Bool = true
  )
    async throws -> Resolution
  {
    guard let schema = query.layout else {
      throw CofferError(.invalidQuery, "A text search needs a checked query.", entity: query.entity)
    }
    var searches = try collect(query.filter, schema)
    let rankedFields = ranking ? query.sort.filter(\.byRelevance).map(\.field) : []
    var statistics: [String: TextRanking.FieldStatistics] = [:]
    // A reader that evaluates `matches` from its index is asked only to rank.
    if let index, !searches.isEmpty, !(index.evaluatesMatchesFromIndex && rankedFields.isEmpty),
      try answer(
        &searches, statistics: &statistics, from: index, entity: query.entity, ranked: rankedFields,
        topRanked: ranking ? TopRanked.rankedSearch(query, searches) : nil)
    {
      let keeping = index.evaluatesMatchesFromIndex
      return try resolved(
        query, schema, searches, statistics, rankedFields, replacingMatches: !keeping, keepingMatches: keeping
      )
    }
    let needsScan = !nativeMatching || !rankedFields.isEmpty
    guard needsScan, !searches.isEmpty else {
      var plain = query
      plain.sort = query.sort.filter { !$0.byRelevance }
      return Resolution(query: plain, ordering: nil)
    }
    let fields = Array(Set(searches.map(\.field)))
    var scan = Query(entity: query.entity)
    scan.layout = schema
    try await reader(scan) { stored in
      let id = try stored.value(at: schema.idPosition)
      for field in fields {
        guard let position = schema.position(of: field), let text = stored.string(at: position) else {
          continue
        }
        let words = TextTokenizer.tokens(text)
        statistics[field, default: TextRanking.FieldStatistics()].rows += 1
        statistics[field, default: TextRanking.FieldStatistics()].words += words.count
        for index in searches.indices where searches[index].field == field {
          let counts = searches[index].query.terms.map { $0.occurrences(in: words) }
          guard counts.contains(where: { $0 > 0 }) else { continue }
          for (term, count) in counts.enumerated() where count > 0 {
            searches[index].documentFrequency[term] += 1
          }
          if searches[index].query.matches(counts: counts) != searches[index].matchesEmpty {
            searches[index].listed.append(id)
          }
          if rankedFields.contains(field) {
            searches[index].occurrences.append(id: id, length: words.count, counts: counts)
          }
        }
      }
    }
    return try resolved(query, schema, searches, statistics, rankedFields, replacingMatches: !nativeMatching)
  }

  /// Fills each search's lists and counts from the text index, if the entity has one on every
  /// searched field; `false` (and nothing filled) otherwise. The search numbered `topRanked`
  /// gives a page ranked by it alone (``TopRanked``), which needs only its matching rows.
  static func answer(
    _ searches: inout [Search], statistics: inout [String: TextRanking.FieldStatistics],
    from index: any TextIndexReading, entity: String, ranked: [String], topRanked: Int?
  ) throws -> Bool {
    var answers: [TextIndexAnswer] = []
    for (number, search) in searches.enumerated() {
      guard
        let answer = try index.searchTextIndex(
          entity: entity, field: search.field, query: search.query, ranking: ranked.contains(search.field),
          matchingOnly: number == topRanked)
      else { return false }
      answers.append(answer)
    }
    for (position, answer) in answers.enumerated() {
      searches[position].listed = answer.listed
      searches[position].documentFrequency = answer.documentFrequency
      searches[position].occurrences = answer.occurrences
      statistics[searches[position].field] = answer.statistics
    }
    return true
  }

  /// The query to hand the backend, and the order to apply, once every search's lists and
  /// counts are known. `keepingMatches`: a text index answered, and the backend evaluates
  /// `matches` from it, so they stay in the query.
  static func resolved(
    _ query: Query, _ schema: EntitySchema, _ searches: [Search],
    _ statistics: [String: TextRanking.FieldStatistics], _ rankedFields: [String], replacingMatches: Bool,
    keepingMatches: Bool = false
  ) throws -> Resolution {
    var resolved = query
    resolved.sort = query.sort
    if replacingMatches {
      let idName = schema.idField.name
      resolved.filter = replacing(query.filter) { field, text in
        guard let search = searches.first(where: { $0.field == field && $0.text == text }) else {
          return .or([])
        }
        return replacement(for: search, idName: idName)
      }
    }
    guard !rankedFields.isEmpty else {
      resolved.sort = query.sort.filter { !$0.byRelevance }
      return Resolution(query: resolved, ordering: nil)
    }
    if replacingMatches || keepingMatches, query.limit != nil,
      let top = TopRanked(query, schema, searches, statistics, keepingMatches: keepingMatches)
    {
      return Resolution(query: resolved, ordering: nil, top: top)
    }
    var scores: [String: [Value: Double]] = [:]
    for field in Set(rankedFields) {
      let stats = statistics[field] ?? TextRanking.FieldStatistics()
      var seen: [TextQuery.Term] = []
      var fieldScores: [Value: Double] = [:]
      for search in searches where search.field == field {
        for term in search.query.positiveTerms where !seen.contains(search.query.terms[term]) {
          seen.append(search.query.terms[term])
          let idf = TextRanking.idf(documentFrequency: search.documentFrequency[term], of: stats)
          let rows = search.occurrences
          for row in 0..<rows.count where rows.counts[row * rows.terms + term] > 0 {
            fieldScores[rows.ids[row], default: 0] += TextRanking.termScore(
              idf: idf, frequency: rows.counts[row * rows.terms + term], length: rows.lengths[row],
              averageLength: stats.averageLength)
          }
        }
      }
      scores[field] = fieldScores
    }
    return Resolution(
      query: resolved, ordering: try RankedOrdering(query.sort, schema: schema, scores: scores))
  }

  /// The distinct `matches` of a filter, parsed.
  static func collect(_ filter: Filter, _ schema: EntitySchema) throws -> [Search] {
    var found: [Search] = []
    func visit(_ filter: Filter) throws {
      switch filter {
      case .matches(let field, let text):
        guard !found.contains(where: { $0.field == field && $0.text == text }) else { return }
        guard let position = schema.position(of: field) else {
          throw QueryValidator.unknownField(field, schema)
        }
        let query = try parse(text, field: field, schema: schema)
        found.append(
          Search(
            field: field, position: position, text: text, query: query,
            matchesEmpty: query.matches(counts: Array(repeating: 0, count: query.terms.count)),
            documentFrequency: Array(repeating: 0, count: query.terms.count),
            occurrences: TextOccurrences(terms: query.terms.count)))
      case .and(let parts), .or(let parts): for part in parts { try visit(part) }
      case .not(let inner): try visit(inner)
      case .all, .compare, .isIn, .string, .compareFields: break
      }
    }
    try visit(filter)
    return found
  }

  /// Parses a search query, or throws ``CofferError/Code/invalidQuery`` naming the entity and
  /// field (never the query's text).
  package static func parse(_ text: String, field: String, schema: EntitySchema) throws -> TextQuery {
    do {
      return try TextQuery(parsing: text)
    } catch {
      throw CofferError(
        .invalidQuery, "The search query on '\(schema.name).\(field)' \(error.reason).", entity: schema.name,
        field: field)
    }
  }

  /// The filter with each `matches` replaced.
  static func replacing(_ filter: Filter, _ body: (String, String) -> Filter) -> Filter {
    switch filter {
    case .matches(let field, let text): body(field, text)
    case .and(let parts): .and(parts.map { replacing($0, body) })
    case .or(let parts): .or(parts.map { replacing($0, body) })
    case .not(let inner): .not(replacing(inner, body))
    case .all, .compare, .isIn, .string, .compareFields: filter
    }
  }
}

/// The order of a query with relevance keys: each key by its field's value or by a row's
/// score, then id ascending.
struct RankedOrdering {
  enum Key {
    case field(Int, ascending: Bool)
    case relevance([Value: Double], ascending: Bool)
  }

  let keys: [Key]
  let idPosition: Int

  init(_ sort: [Sort], schema: EntitySchema, scores: [String: [Value: Double]]) throws {
    keys = try sort.map { key in
      guard let position = schema.position(of: key.field) else {
        throw QueryValidator.unknownField(key.field, schema)
      }
      return key.byRelevance
        ? .relevance(scores[key.field] ?? [:], ascending: key.ascending)
        : .field(position, ascending: key.ascending)
    }
    idPosition = schema.idPosition
  }

  func compare(_ lhs: Row, _ rhs: Row) -> Int {
    for key in keys {
      switch key {
      case .field(let position, let ascending):
        let order = ValueOrder.compare(lhs[position], rhs[position])
        if order != 0 { return ascending ? order : -order }
      case .relevance(let scores, let ascending):
        let left = scores[lhs[idPosition]] ?? 0
        let right = scores[rhs[idPosition]] ?? 0
        if left != right { return (left < right) == ascending ? -1 : 1 }
      }
    }
    return ValueOrder.compare(lhs[idPosition], rhs[idPosition])
  }
}

/// An optional ability of a ``StorageBackend``: it evaluates ``Filter/matches(field:query:)``
/// itself, in every filter it is given (reads, counts, changes by query, preconditions), with
/// exactly the meaning of ``CompiledFilter`` — Coffer's tokenizer and query syntax.
///
/// A backend that does not adopt it still answers searches: ``Store`` first reads the
/// entity's rows and hands the backend a filter on the ids of the rows that match.
@_spi(Backend) public protocol TextMatching: StorageBackend {}

extension Filter {
  /// Whether the filter has a ``matches(field:query:)`` anywhere.
  package var searchesText: Bool {
    switch self {
    case .matches: true
    case .and(let parts), .or(let parts): parts.contains(where: \.searchesText)
    case .not(let inner): inner.searchesText
    case .all, .compare, .isIn, .string, .compareFields: false
    }
  }
}

extension Filter {
  /// Whether the filter has a ``matches(field:query:)`` on `field`.
  package func searches(field: String) -> Bool {
    switch self {
    case .matches(let name, _): name == field
    case .and(let parts), .or(let parts): parts.contains { $0.searches(field: field) }
    case .not(let inner): inner.searches(field: field)
    case .all, .compare, .isIn, .string, .compareFields: false
    }
  }
}
