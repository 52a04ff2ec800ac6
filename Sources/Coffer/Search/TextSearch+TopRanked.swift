extension TextSearch {
  /// A page of a query ordered by relevance alone, read from a text index's answer: every row
  /// the query can select is a match of one search (a `matches` the filter requires), so those
  /// matches, ranked by their scores and then by id, are the query's order. Only the first ones
  /// are ranked (a partial selection) and read, in batches, until the page is full; the rest of
  /// the filter is applied to each batch by the backend.
  struct TopRanked {
    /// The candidates' ids and scores.
    let ids: [Value]
    let scores: [Double]
    let ascending: Bool
    /// The query each batch is read with: the whole filter, with the search that gave the
    /// candidates taken as matched (every candidate matches it), and no order or page.
    let rest: Query
    let idName: String
    let idPosition: Int

    /// The number of the search a page of `query` is ranked by alone: `nil` when the query has
    /// no page, its order is not relevance alone, or no `matches` the filter requires (outside
    /// any `OR` or `NOT`) is on the ranked field.
    static func rankedSearch(_ query: Query, _ searches: [Search]) -> Int? {
      guard query.limit != nil, query.sort.count == 1, let key = query.sort.first, key.byRelevance else {
        return nil
      }
      let onField = searches.indices.filter { searches[$0].field == key.field }
      guard onField.count == 1, let number = onField.first, !searches[number].matchesEmpty,
        required(query.filter).contains(where: { $0 == (searches[number].field, searches[number].text) })
      else { return nil }
      return number
    }

    /// The page reader for a query, or `nil` when it has no ``rankedSearch(_:_:)``. With
    /// `keepingMatches`, the backend evaluates the other searches' `matches` itself.
    init?(
      _ query: Query, _ schema: EntitySchema, _ searches: [Search],
      _ statistics: [String: TextRanking.FieldStatistics], keepingMatches: Bool = false
    ) {
      guard let number = Self.rankedSearch(query, searches), let key = query.sort.first else { return nil }
      let search = searches[number]
      let stats = statistics[key.field] ?? TextRanking.FieldStatistics()
      let positive = search.query.positiveTerms
      let idf = search.documentFrequency.map { TextRanking.idf(documentFrequency: $0, of: stats) }
      let rows = search.occurrences
      var ids: [Value] = []
      var scores: [Double] = []
      ids.reserveCapacity(rows.count)
      scores.reserveCapacity(rows.count)
      var counts = Array(repeating: 0, count: rows.terms)
      for row in 0..<rows.count {
        for term in 0..<rows.terms { counts[term] = rows.counts[row * rows.terms + term] }
        guard rows.allMatch || search.query.matches(counts: counts) else { continue }
        // Term by term in the query's order, as the ranking of every other read adds them.
        var score = 0.0
        for term in positive where counts[term] > 0 {
          score += TextRanking.termScore(
            idf: idf[term], frequency: counts[term], length: rows.lengths[row],
            averageLength: stats.averageLength)
        }
        ids.append(rows.ids[row])
        scores.append(score)
      }
      self.ids = ids
      self.scores = scores
      ascending = key.ascending
      idName = schema.idField.name
      idPosition = schema.idPosition
      var rest = query
      rest.sort = []
      rest.offset = 0
      rest.limit = nil
      rest.filter = replacing(query.filter) { field, text in
        if field == search.field && text == search.text { return .all }
        if keepingMatches { return .matches(field: field, query: text) }
        guard let other = searches.first(where: { $0.field == field && $0.text == text }) else {
          return .or([])
        }
        return replacement(for: other, idName: schema.idField.name)
      }
      self.rest = rest
    }

    /// The `matches` (field and text) a filter requires: those of its top-level conjunction.
    static func required(_ filter: Filter) -> [(String, String)] {
      switch filter {
      case .matches(let field, let text): [(field, text)]
      case .and(let parts): parts.flatMap(required)
      default: []
      }
    }

    /// Whether candidate `lhs` comes before `rhs`: by score, then by id ascending.
    func before(_ lhs: Int, _ rhs: Int) -> Bool {
      let (left, right) = (scores[lhs], scores[rhs])
      if left != right { return (left < right) == ascending }
      return ValueOrder.compare(ids[lhs], ids[rhs]) < 0
    }

    /// The first `count` candidates in order (all of them, when there are no more).
    func ranked(first count: Int) -> [Int] {
      let total = ids.count
      if count >= total / 2 { return (0..<total).sorted(by: before) }
      // A heap of the `count` best so far, the worst of them at the root.
      var heap: [Int] = []
      heap.reserveCapacity(count)
      func siftDown(_ start: Int) {
        var parent = start
        while true {
          let left = 2 * parent + 1
          guard left < heap.count else { return }
          var worst = left
          if left + 1 < heap.count, before(heap[worst], heap[left + 1]) { worst = left + 1 }
          guard before(heap[parent], heap[worst]) else { return }
          heap.swapAt(parent, worst)
          parent = worst
        }
      }
      for candidate in 0..<total {
        if heap.count < count {
          heap.append(candidate)
          var child = heap.count - 1
          while child > 0 {
            let parent = (child - 1) / 2
            guard before(heap[parent], heap[child]) else { break }
            heap.swapAt(parent, child)
            child = parent
          }
        } else if let root = heap.first, before(candidate, root) {
          heap[0] = candidate
          siftDown(0)
        }
      }
      return heap.sorted(by: before)
    }

    /// Reads the page `offset..<offset + limit` of the candidates that pass the rest of the
    /// filter, in order.
    func read(offset: Int, limit: Int, using reader: Reader, _ visit: (any StoredFields) throws -> Void)
      async throws
    {
      guard limit > 0, !ids.isEmpty else { return }
      let (sum, overflow) = offset.addingReportingOverflow(limit)
      let wanted = overflow ? Int.max : sum
      var order = ranked(first: Swift.min(wanted, ids.count))
      var next = 0
      var kept: [Row] = []
      while kept.count < wanted {
        if next == order.count {
          // The rest of the filter turned some down: rank more (their order starts the same).
          guard order.count < ids.count else { break }
          let (more, over) = order.count.multipliedReportingOverflow(by: 4)
          order = ranked(first: over ? ids.count : Swift.min(ids.count, more))
          continue
        }
        let end = Swift.min(order.count, next + Swift.max(2 * (wanted - kept.count), 16))
        let batch = order[next..<end]
        next = end
        var batchQuery = rest
        batchQuery.filter = .and([.isIn(idName, batch.map { ids[$0] }), rest.filter])
        var found: [Value: Row] = [:]
        try await reader(batchQuery) { stored in
          let row = try Row(stored)
          found[row[idPosition]] = row
        }
        for candidate in batch {
          if let row = found[ids[candidate]] { kept.append(row) }
        }
      }
      guard offset < kept.count else { return }
      try RowFields.handOver(Array(kept[offset..<Swift.min(kept.count, wanted)]), to: visit)
    }
  }

  /// What a `matches` becomes for a backend that does not evaluate it: a filter on the ids of
  /// the rows it selects.
  static func replacement(for search: Search, idName: String) -> Filter {
    search.matchesEmpty
      ? .and([.compare(field: search.field, op: .notEqual, value: .null), .not(.isIn(idName, search.listed))])
      : .isIn(idName, search.listed)
  }
}
