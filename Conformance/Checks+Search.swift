@_spi(Backend) import Coffer
import Foundation

/// Texts for the search checks: folding, phrases, prefixes, CJK and a null.
let searchCells: [Cell] = [
  Cell(id: 1, text: "Swift concurrency: actors and tasks", double: 1),
  Cell(id: 2, text: "SWIFT is swift; swift!", double: 2),
  Cell(id: 3, text: "Caf\u{E9} au lait, na\u{EF}ve r\u{E9}sum\u{E9}", double: 3),
  Cell(id: 4, text: "cafe\u{301} NAI\u{308}VE", double: 4),
  Cell(id: 5, text: "The \u{FB01}le and the \u{FF21}\u{FF30}\u{FF30}\u{FF2C}\u{FF25}", double: 5),
  Cell(id: 6, text: "file apple structured concurrency", double: 6),
  Cell(id: 7, text: "\u{6771}\u{4EAC}\u{30BF}\u{30EF}\u{30FC}\u{306B}\u{884C}\u{304F}", double: 7),
  Cell(id: 8, text: "\u{4EAC}\u{90FD}\u{3068}\u{6771}\u{5927}\u{962A}", double: 8),
  Cell(id: 9, text: nil, double: 9),
  Cell(id: 10, text: "", double: 10),
  Cell(id: 11, text: "don't e-mail me; STRASSE stra\u{DF}e \u{130}stanbul", double: 11),
]

extension ConformanceSuite {
  static let searchChecks: [ConformanceCheck] = [
    searchCheck(
      "search.words",
      "A word matches whole words only, folding case (Unicode lowercase) and diacritics (NFKD).",
      [
        ("swift", [1, 2]), ("SWIFT", [1, 2]), ("swif", []), ("cafe", [3, 4]), ("CAFÉ", [3, 4]),
        ("naive", [3, 4]), ("resume", [3]), ("file", [5, 6]), ("apple", [5, 6]), ("ＡＰＰＬＥ", [5, 6]),
        ("concurrency", [1, 6]), ("and", [1, 5]), ("istanbul", [11]), ("strasse", [11]), ("straße", [11]),
        ("ss", []),
      ]),
    searchCheck(
      "search.word-boundaries",
      "Punctuation, apostrophes and hyphens split words; a query word that folds "
        + "into several words is a phrase.",
      [
        ("don", [11]), ("t", [11]), ("don't", [11]), ("e-mail", [11]), ("mail", [11]), ("email", []),
        ("concurrency:", [1, 6]), ("swift;", [1, 2]), ("--", nil),
      ]),
    searchCheck(
      "search.prefix", "word* matches every word that starts with the folded prefix.",
      [
        ("swif*", [1, 2]), ("SW*", [1, 2]), ("con*", [1, 6]), ("caf*", [3, 4]), ("f*", [5, 6]),
        ("zz*", []), ("e-ma*", [11]), ("*", nil), ("-*", nil),
      ]),
    searchCheck(
      "search.phrase", "\"a b\" matches the words next to each other, in order.",
      [
        ("\"structured concurrency\"", [6]), ("\"concurrency structured\"", []),
        ("\"swift concurrency\"", [1]), ("\"swift swift\"", [2]), ("\"cafe au lait\"", [3]),
        ("\"au cafe\"", []), ("\"unclosed", nil), ("\"\"", nil), ("\"\" swift", [1, 2]),
      ]),
    searchCheck(
      "search.operators",
      "Words join with AND by default; OR, NOT and parentheses; NOT tightest, then AND, then OR.",
      [
        ("swift concurrency", [1]), ("swift AND concurrency", [1]), ("swift OR file", [1, 2, 5, 6]),
        ("swift NOT actors", [2]), ("NOT swift", [3, 4, 5, 6, 7, 8, 10, 11]),
        ("file OR swift concurrency", [1, 5, 6]), ("(file OR swift) concurrency", [1, 6]),
        ("NOT (swift OR file)", [3, 4, 7, 8, 10, 11]), ("NOT NOT swift", [1, 2]),
        ("swift and", [1]), ("swift OR", nil), ("AND swift", nil), ("swift AND OR file", nil),
        ("NOT", nil), ("(swift", nil), ("swift)", nil), ("()", nil), ("   ", nil), ("", nil),
      ]),
    searchCheck(
      "search.cjk",
      "Han, Hiragana and Katakana letters are words of one character; a run of them is a phrase.",
      [
        ("\u{6771}", [7, 8]), ("\u{6771}\u{4EAC}", [7]), ("\u{4EAC}", [7, 8]), ("\u{5927}\u{962A}", [8]),
        ("\u{30BF}\u{30EF}\u{30FC}", [7]), ("\u{6771} \u{90FD}", [8]), ("\"\u{4EAC}\u{90FD}\"", [8]),
        ("\u{4EAC}\u{6771}", []),
      ]),
    ConformanceCheck(
      "search.null-and-not", "A null field never matches; NOT of a search matches exactly the other rows."
    ) { context in
      let store = try await context.store(with: searchCells)
      let search = FieldRef("text").matches("swift OR cafe")
      try await expectIDs(store.query(Cell.self).filter(search), [1, 2, 3, 4], "ids matching swift OR cafe")
      try await expectIDs(
        store.query(Cell.self).filter(!search), [5, 6, 7, 8, 9, 10, 11], "ids not matching swift OR cafe")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").matches("NOT swift")), [3, 4, 5, 6, 7, 8, 10, 11],
        "ids matching NOT swift (not the null row)")
      try expectEqual(try await store.query(Cell.self).filter(!search).count(), 7, "count not matching")
    },
    ConformanceCheck(
      "search.combined", "A search combines with every other filter, sorts by any field, pages and counts."
    ) { context in
      let store = try await context.store(with: searchCells)
      let base = store.query(Cell.self).filter(FieldRef("text").matches("swift OR file OR cafe"))
      try await expectIDs(
        base.sort([Sort("double", ascending: false)]), [6, 5, 4, 3, 2, 1], "sorted by double down")
      try await expectIDs(base.filter(FieldRef("double") > 2.5), [3, 4, 5, 6], "with double > 2.5")
      try await expectIDs(
        base.filter(FieldRef("double") < 2 || FieldRef("double") > 5), [1, 6], "with double < 2 or > 5")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").matches("swift") || FieldRef("double") == 7),
        [1, 2, 7],
        "swift or double 7")
      try await expectIDs(base.offset(2).limit(2), [3, 4], "page 2 of 2")
      try expectEqual(try await base.count(), 6, "count")
      try expectEqual(try await base.offset(4).limit(10).count(), 2, "count of the last page")
      try expectEqual(try await base.exists(), true, "exists")
      try expectEqual(
        try await store.query(Cell.self).filter(FieldRef("text").matches("nothing")).exists(), false,
        "exists for no match")
    },
    ConformanceCheck(
      "search.change-by-query", "Delete and update by query select the rows a search selects."
    ) { context in
      let store = try await context.store(with: searchCells)
      try expectEqual(
        try await store.query(Cell.self).filter(FieldRef("text").matches("cafe")).update([
          .set("double", to: .double(0))
        ]),
        2, "updated where text matches cafe")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("double") == 0.0), [3, 4], "ids with double 0")
      try expectEqual(
        try await store.query(Cell.self).filter(FieldRef("text").matches("swift NOT actors")).delete(), 1,
        "deleted where text matches swift NOT actors")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").matches("swift")), [1],
        "ids matching swift after the delete")
    },
    ConformanceCheck(
      "search.relevance",
      "Sorting by relevance orders by BM25 (k1 1.2, b 0.75), best first, ties by id ascending."
    ) { context in
      let texts: [String?] = [
        "swift", "swift swift", "swift is a bird", "a bird", "swift swift swift swift swift swift swift",
        "Swift", nil, "the swift and the swift bird", "swift",
      ]
      let cells = texts.enumerated().map { Cell(id: Int64($0.offset + 1), text: $0.element, double: 0) }
      let store = try await context.store(with: cells)
      let query = store.query(Cell.self).filter(FieldRef("text").matches("swift")).sort([.relevance("text")])
      let found = try await ids(query)
      // Rows 1, 6 and 9 tie (one word, "swift"): they keep id order.
      guard let first = found.firstIndex(of: 1), let sixth = found.firstIndex(of: 6),
        let ninth = found.firstIndex(of: 9), first < sixth, sixth < ninth
      else { throw CheckFailure("Rows with equal scores must come in id order; got \(found).") }
      guard let two = found.firstIndex(of: 2), two < first else {
        throw CheckFailure("\"swift swift\" must rank above \"swift\" (same length per word); got \(found).")
      }
      try expectEqual(found, referenceOrder("swift", texts), "ids by relevance to swift")
      try expectEqual(
        try await ids(
          store.query(Cell.self).filter(FieldRef("text").matches("swift OR bird")).sort([.relevance("text")])),
        referenceOrder("swift OR bird", texts), "ids by relevance to swift OR bird")
      try expectEqual(
        try await ids(
          store.query(Cell.self).filter(FieldRef("text").matches("swift OR bird")).sort([.relevance("text")])
            .offset(2)
            .limit(3)), Array(referenceOrder("swift OR bird", texts)[2..<5]), "page of 3 after 2 by relevance"
      )
      var ascending = Sort.relevance("text")
      ascending.ascending = true
      try expectEqual(
        try await ids(store.query(Cell.self).filter(FieldRef("text").matches("bird")).sort([ascending])),
        referenceOrder("bird", texts, ascending: true), "ids by relevance to bird, least relevant first")
    },
    ConformanceCheck(
      "search.relevance-with-keys",
      "Relevance is one sort key among others; a relevance sort needs a search on its field."
    ) { context in
      let texts: [String?] = ["swift", "swift swift", "swift", "bird", "swift bird"]
      let cells = texts.enumerated().map {
        Cell(id: Int64($0.offset + 1), text: $0.element, double: Double($0.offset % 2))
      }
      let store = try await context.store(with: cells)
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").matches("swift")).sort([
          Sort("double"), .relevance("text"),
        ]),
        [1, 3, 5, 2], "by double, then relevance")
      _ = try await expectThrows(.invalidQuery, "a relevance sort with no search on the field") {
        try await store.query(Cell.self).sort([.relevance("text")]).fetch()
      }
    },
    ConformanceCheck(
      "search.key-paths", "Key-path searches: .matches(\\.field, query) and sort(\\.field, .relevance)."
    ) { context in
      let store = try await context.store(with: searchCells)
      try await expectIDs(
        store.query(Cell.self).filter(.matches(\.text, "swift OR apple")).sort(\.text, .relevance),
        referenceOrder("swift OR apple", searchCells.map(\.text)),
        "ids matching swift OR apple by relevance")
      try await expectIDs(
        store.query(Cell.self).filter(.matches(\.text, "swift") && \.double > 1.5), [2],
        "swift with double > 1.5")
    },
    ConformanceCheck(
      "search.bad-queries",
      "A query that cannot be parsed, or a search on a field that is not a string, "
        + "is refused with invalidQuery naming entity and field, never the query's text."
    ) { context in
      let store = try await context.store(with: searchCells)
      let bad = [
        "", "  ", "\"secret-word", "(secretword", "secretword)", "secretword AND", "OR secretword", "NOT",
        "*",
      ]
      for query in bad {
        let error = try await expectThrows(.invalidQuery, "query \(query.debugDescription)") {
          try await store.query(Cell.self).filter(FieldRef("text").matches(query)).fetch()
        }
        try expectEqual(error.field, "text", "the field named for \(query.debugDescription)")
        if error.description.contains("secret") {
          throw CheckFailure("The error for a bad query shows the query's text: \(error.description)")
        }
      }
      _ = try await expectThrows(.invalidQuery, "a search on a double field") {
        try await store.query(Cell.self).filter(FieldRef("double").matches("1")).fetch()
      }
      _ = try await expectThrows(.invalidQuery, "a count with a bad query") {
        try await store.query(Cell.self).filter(FieldRef("text").matches("(")).count()
      }
    },
    ConformanceCheck(
      "search.hostile-text",
      "Emoji, combining marks, right-to-left text, NUL and a 1 MB text are searched safely."
    ) { context in
      let big = hostileBigText
      let texts = hostileTexts
      let cells = texts.enumerated().map { Cell(id: Int64($0.offset + 1), text: $0.element, double: 0) }
      let store = try await context.store(with: cells)
      let cases: [(String, [Int64])] = [
        ("party time", [1]), ("party \u{1F389}", [1]), ("\u{5E9}\u{5DC}\u{5D5}\u{5DD}", [2]),
        ("\u{5E2}\u{5D5}\u{5DC}\u{5DD}", [2]),
        ("\u{645}\u{631}\u{62D}\u{628}\u{627}", [3]), ("world", [3]), ("nul byte", [4]), ("zero", [4]),
        ("needle", [5]), ("\"dolor needle\"", [5]), ("zalgo", [6]), ("evil", [7]), ("nul\u{0}byte", [4]),
      ]
      for (query, expected) in cases {
        try await expectIDs(
          store.query(Cell.self).filter(FieldRef("text").matches(query)), expected,
          "ids matching \(query.unicodeScalars.map { String($0.value, radix: 16) })")
        try expectEqual(
          try await ids(
            store.query(Cell.self).filter(FieldRef("text").matches(query)).sort([.relevance("text")])),
          expected, "ids by relevance matching \(query.unicodeScalars.map { String($0.value, radix: 16) })")
      }
      for (index, text) in texts.enumerated() {
        try expectEqual(
          try await store.get(Cell.self, id: Int64(index + 1))?.text, text,
          "text \(index + 1) read back unchanged")
      }
    },
    ConformanceCheck(
      "search.random-reference",
      "Random texts and queries give the reference search's rows, order and counts."
    ) { context in
      try await randomSearchCheck(context, seed: differentialSeed())
    },
  ]

  /// A check of queries on ``searchCells``: each with the ids it matches, or `nil` when it
  /// must be refused with `invalidQuery`. Every expectation is also checked against the
  /// suite's reference search.
  /// A 1 MB text whose last word is `needle`.
  static let hostileBigText = String(repeating: "lorem ipsum dolor ", count: 58_255) + "needle"

  /// Hostile texts, searched by id 1…7: emoji with joiners, Hebrew with points, Arabic with
  /// marks, NULs, ``hostileBigText``, stacked combining marks, a right-to-left override.
  static let hostileTexts: [String?] = [
    "party \u{1F389}\u{1F469}\u{200D}\u{1F469}\u{200D}\u{1F467} time",
    "\u{5E9}\u{5B8}\u{5DC}\u{5D5}\u{5B9}\u{5DD} \u{5E2}\u{5D5}\u{5DC}\u{5DD}",
    "\u{645}\u{64E}\u{631}\u{652}\u{62D}\u{64E}\u{628}\u{64B}\u{627} world", "nul\u{0}byte zero\u{0}",
    hostileBigText,
    "Z\u{336}\u{30D}a\u{35B}\u{316}l\u{30F}go", "\u{202E}evil\u{202C} text",
  ]

  static func searchCheck(_ id: String, _ summary: String, _ cases: [(String, [Int64]?)]) -> ConformanceCheck
  {
    ConformanceCheck(id, summary) { context in
      let store = try await context.store(with: searchCells)
      for (query, expected) in cases {
        let reference = SearchReference.parse(query).map { parsed in
          searchCells.filter { SearchReference.matches(parsed, $0.text) }.map(\.id)
        }
        guard reference == expected else {
          throw CheckFailure("The suite's reference disagrees with the check for \(query.debugDescription).")
        }
        let filtered = store.query(Cell.self).filter(FieldRef("text").matches(query))
        guard let expected else {
          _ = try await expectThrows(.invalidQuery, "query \(query.debugDescription)") {
            try await filtered.fetch()
          }
          continue
        }
        try await expectIDs(filtered, expected, "ids matching \(query.debugDescription)")
        try expectEqual(
          try await filtered.count(), expected.count, "count matching \(query.debugDescription)")
      }
    }
  }
}

/// The ids (1-based row numbers) the reference search orders by relevance to `query`.
func referenceOrder(_ query: String, _ texts: [String?], ascending: Bool = false) -> [Int64] {
  guard let parsed = SearchReference.parse(query) else { return [] }
  let scores = SearchReference.scores(parsed, texts)
  let matching = texts.indices.filter { SearchReference.matches(parsed, texts[$0]) }
  return matching.sorted { a, b in
    if scores[a] != scores[b] { return ascending ? scores[a] < scores[b] : scores[a] > scores[b] }
    return a < b
  }.map { Int64($0 + 1) }
}
