@_spi(Backend) import Coffer
import CofferTools
import Foundation

extension ConformanceSuite {
  static let textIndexChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "text-index.declaring",
      "Index.text(on:) is a text index named text:FIELD, stored with the schema; a schema stored "
        + "before text indexes existed reads as before; one on anything but one String field is refused."
    ) { context in
      let store = try await context.store(with: searchCells.map(IndexedCell.init))
      let stored = try await store.storedSchemas().first { $0.name == "Cell" }
      try expectEqual(stored?.indexes, [.text(on: "text")], "the stored indexes")
      try expectEqual(stored?.indexes.first?.name, "text:text", "the text index's name")
      try expectEqual(stored?.indexes.first?.isText, true, "the index is a text index")
      let old = Data(#"{"fields":["text"],"isUnique":false}"#.utf8)
      try expectEqual(
        try JSONDecoder().decode(Index.self, from: old), Index(["text"]), "an index stored before")
      let encoded = try JSONEncoder().encode(Index.text(on: "text"))
      try expectEqual(try JSONDecoder().decode(Index.self, from: encoded), .text(on: "text"), "a round trip")
      let fields = [Field("id", .int), Field("body", .string, isOptional: true), Field("score", .double)]
      var unique = Index.text(on: "body")
      unique.isUnique = true
      for (index, field) in [
        (Index.text(on: "score"), "score"), (.text(on: "missing"), "missing"), (unique, "body"),
      ] {
        let error = try await expectThrows(.invalidSchema, "a text index on \(field)") {
          try EntitySchema(name: "Post", fields: fields, idField: "id", indexes: [index])
        }
        try expectMentions(error, ["Post", field], "the error for a text index on \(field)")
      }
    },
    ConformanceCheck(
      "text-index.same-answers",
      "With a text index, searches select, count, rank and page exactly as the reference search does."
    ) { context in
      let store = try await context.store(with: searchCells.map(IndexedCell.init))
      let texts = searchCells.map(\.text)
      let queries = [
        "swift", "SWIFT", "cafe", "naive", "file", "ＡＰＰＬＥ", "concurrency", "don't", "e-mail", "swif*", "caf*",
        "f*", "zz*", "e-ma*", "\"structured concurrency\"", "\"swift swift\"", "\"cafe au lait\"",
        "\"au cafe\"",
        "swift concurrency", "swift OR file", "swift NOT actors", "NOT swift", "NOT (swift OR file)",
        "file OR swift concurrency", "\u{6771}", "\u{6771}\u{4EAC}", "\u{30BF}\u{30EF}\u{30FC}", "straße",
        "ss",
      ]
      for query in queries {
        try await expectSameSearch(store, query, numbered(texts))
      }
    },
    ConformanceCheck(
      "text-index.random-changes",
      "Random inserts, updates, deletes, changes by query and failed batches, with searches between them, "
        + "keep a text-indexed entity's searches equal to the reference search."
    ) { context in
      try await randomTextIndexCheck(context, seed: differentialSeed())
    },
    ConformanceCheck(
      "text-index.hostile-text",
      "A text index holds emoji, combining marks, right-to-left text, NUL and a 1 MB text."
    ) { context in
      let big = hostileBigText
      let texts = hostileTexts + ["\u{0}"]
      let store = try await context.store(
        with: texts.enumerated().map { IndexedCell(id: Int64($0.offset + 1), text: $0.element) })
      // The reference search reads the 1 MB text slowly: it is checked against known answers,
      // the others against the reference.
      let small = numbered(texts).filter { $0.id != 5 }
      _ = try await store.delete(IndexedCell.self, id: 5)
      for query in [
        "party time", "party \u{1F389}", "\u{5E9}\u{5DC}\u{5D5}\u{5DD}",
        "\u{645}\u{631}\u{62D}\u{628}\u{627}",
        "nul byte", "zalgo", "evil", "nul\u{0}byte", "world OR text",
      ] {
        try await expectSameSearch(store, query, small)
      }
      try await store.insert(IndexedCell(id: 5, text: big))
      let matches = { (query: String) in store.query(IndexedCell.self).filter(FieldRef("text").matches(query))
      }
      try await expectIDs(matches("needle"), [5], "ids matching needle")
      try await expectIDs(matches("\"dolor needle\""), [5], "ids matching the phrase dolor needle")
      // BM25 saturates: 58,255 times lorem in a long text outweighs one zalgo in a one-word text.
      try await expectIDs(
        matches("lorem OR zalgo").sort([.relevance("text")]), [5, 6], "ids by relevance to lorem OR zalgo")
      try expectEqual(try await matches("ipsum OR evil").count(), 2, "count matching ipsum OR evil")
      try await store.update(IndexedCell(id: 5, text: "haystack"))
      try await expectIDs(
        matches("needle OR haystack"), [5], "ids matching needle OR haystack after the update")
      try await expectIDs(matches("lorem"), [], "ids matching lorem after the update")
    },
    ConformanceCheck(
      "text-index.evolution", requires: [.reopenable, .schemaEvolution],
      "Adding a text index to stored rows, and dropping it, by preparing the type with and without it: "
        + "every search answers as the reference search does before, between and after."
    ) { context in
      let texts = searchCells.map(\.text)
      var store = try await context.reopen(try await context.store(with: searchCells))
      try await store.prepare([IndexedCell.self])
      try expectEqual(
        try await store.storedSchemas().first { $0.name == "Cell" }?.indexes, [.text(on: "text")],
        "the indexes after adding the text index")
      for query in ["swift", "caf*", "\"swift swift\"", "NOT swift", "file OR swift concurrency"] {
        try await expectSameSearch(store, query, numbered(texts))
      }
      store = try await context.reopen(store)
      try await store.prepare([Cell.self])
      try expectEqual(
        try await store.storedSchemas().first { $0.name == "Cell" }?.indexes, [],
        "the indexes after dropping the text index")
      try await expectIDs(
        store.query(Cell.self).filter(FieldRef("text").matches("swift")).sort([.relevance("text")]),
        referenceOrder("swift", texts), "ids by relevance to swift without the index")
    },
    ConformanceCheck(
      "text-index.migration", requires: .migrations,
      "addIndex and dropIndex add and drop a text index on stored rows; searches answer the same throughout."
    ) { context in
      let texts = searchCells.map(\.text)
      let store = try await context.store(with: searchCells)
      let adding = MigrationStep.addIndex("search", entity: "Cell", .text(on: "text"))
      try await store.migrate(MigrationPlan([adding]))
      guard let indexed = try await store.storedSchemas().first(where: { $0.name == "Cell" }) else {
        throw CheckFailure("the store has no entity 'Cell' after the migration")
      }
      try expectEqual(indexed.indexes, [.text(on: "text")], "the indexes after addIndex")
      try await store.prepare(schemas: [indexed])
      for query in ["swift", "caf*", "\"cafe au lait\"", "swift OR file"] {
        let expected = referenceOrder(query, texts)
        let rows = try await store.fetchRows(
          Query(entity: "Cell", filter: .matches(field: "text", query: query), sort: [.relevance("text")]))
        try expectEqual(rows.map { $0[0] }, expected.map { Value.int($0) }, "ids by relevance to \(query)")
      }
      try await store.apply(ChangeSet([.delete(entity: "Cell", id: .int(2))]))
      let rows = try await store.fetchRows(
        Query(entity: "Cell", filter: .matches(field: "text", query: "swift")))
      try expectEqual(rows.map { $0[0] }, [.int(1)], "ids matching swift after a delete")
      try await store.migrate(
        MigrationPlan([
          adding, .dropIndex("no-search", entity: "Cell", fields: ["text"]),
        ]))
      guard let plain = try await store.storedSchemas().first(where: { $0.name == "Cell" }) else {
        throw CheckFailure("the store has no entity 'Cell' after dropIndex")
      }
      try expectEqual(plain.indexes, [], "the indexes after dropIndex")
      try await store.prepare(schemas: [plain])
      try expectEqual(
        try await store.countRows(
          Query(entity: "Cell", filter: .matches(field: "text", query: "cafe OR file"))),
        4, "count matching cafe OR file after dropIndex")
    },
    ConformanceCheck(
      "text-index.ranked-beside-filters",
      "With a text index, a row another part of the filter selects ranks by the terms it holds, and "
        + "two searches on one field rank by their terms together, as the reference search scores them."
    ) { context in
      let store = try await context.store(with: searchCells.map(IndexedCell.init))
      let texts = searchCells.map(\.text)
      for query in [
        "swift concurrency", "file OR swift concurrency", "\"structured concurrency\" apple", "caf*",
      ] {
        guard let parsed = SearchReference.parse(query) else {
          throw CheckFailure("the query \(query) parses")
        }
        let scores = SearchReference.scores(parsed, texts)
        let selected = texts.indices.filter { SearchReference.matches(parsed, texts[$0]) || $0 < 2 }
        let expected = selected.sorted { scores[$0] != scores[$1] ? scores[$0] > scores[$1] : $0 < $1 }
          .map { Int64($0 + 1) }
        let filtered = store.query(IndexedCell.self).filter(
          .or([FieldRef("text").matches(query), FieldRef("id") <= Int64(2)]))
        try await expectIDs(
          filtered.sort([.relevance("text")]), expected, "ids by relevance to \(query) or id <= 2")
        try await expectIDs(
          filtered.sort([.relevance("text")]).offset(1).limit(2), Array(expected.dropFirst().prefix(2)),
          "page by relevance to \(query) or id <= 2")
        try expectEqual(try await filtered.count(), expected.count, "count matching \(query) or id <= 2")
      }
      let both = store.query(IndexedCell.self).filter(
        .and([FieldRef("text").matches("swift"), FieldRef("text").matches("concurrency OR tasks")]))
      try await expectIDs(
        both.sort([.relevance("text")]), referenceOrder("swift (concurrency OR tasks)", texts),
        "ids by relevance to two searches on text")
      try await expectIDs(
        both.sort([.relevance("text")]).limit(1),
        Array(referenceOrder("swift (concurrency OR tasks)", texts).prefix(1)),
        "the first by relevance to two searches on text")
    },
    ConformanceCheck(
      "text-index.churn",
      "Thousands of updates and deletes of a few text-indexed rows leave every search equal to the "
        + "reference search, however an index keeps or sweeps the rows it dropped."
    ) { context in
      var random = SplitMix64(seed: 0xC4_0A2)
      func text() -> String? {
        random.chance(8)
          ? nil
          : (0..<(1 + random.below(6))).map { _ in random.pick(searchVocabulary) }.joined(separator: " ")
      }
      var model: [Int64: String?] = [:]
      for id in Int64(1)...40 { model[id] = .some(text()) }
      let store = try await context.store(with: model.map { IndexedCell(id: $0.key, text: $0.value) })
      for round in 0..<60 {
        var cells: [IndexedCell] = []
        for id in model.keys.sorted() {
          let cell = IndexedCell(id: id, text: text())
          model[id] = .some(cell.text)
          cells.append(cell)
        }
        try await store.batch { batch in for cell in cells { try batch.update(cell) } }
        if round % 20 == 19 {
          let removed = model.keys.sorted().prefix(3)
          for id in removed {
            _ = try await store.delete(IndexedCell.self, id: id)
            model[id] = nil
          }
        }
      }
      let rows = model.map { (id: $0.key, text: $0.value) }
      let word = searchVocabulary[0]
      for query in [
        word, "\(word) \(searchVocabulary[1])", "\(searchVocabulary[2]) OR \(word)",
        String(word.prefix(1)) + "*",
      ] {
        try await expectSameSearch(store, query, rows)
      }
    },
    ConformanceCheck(
      "text-index.copy-and-export",
      "A copy, and an import of an export, carry the text index in the schema and search as the "
        + "reference search does; the export names no table of the index."
    ) { context in
      let texts = searchCells.map(\.text)
      let source = try await context.store(with: searchCells.map(IndexedCell.init))
      let copy = try await context.store()
      let copied = try await StoreCopier(from: source, to: copy).run()
      try expect(copied.isVerified, "the copy is verified (\(copied.differences))")
      var exported = ""
      try await source.exportJSONLines { exported += $0 }
      let lines = exported.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
      try expect(
        !exported.contains("/text/") && !exported.lowercased().contains("fts5"),
        "the export names no table of the index")
      let imported = try await context.store()
      _ = try await imported.importJSONLines(AsyncLines(lines))
      for (store, what) in [(copy, "the copy"), (imported, "the import")] {
        try expectEqual(
          try await store.storedSchemas().first { $0.name == "Cell" }?.indexes, [.text(on: "text")],
          "the indexes of \(what)")
        for query in ["swift", "caf*", "file OR swift concurrency"] {
          try await expectSameSearch(store, query, numbered(texts))
        }
      }
    },
    ConformanceCheck(
      "text-index.relabel", requires: .migrations,
      "Renaming a text-indexed entity and its field keeps the index: searches under the new names answer "
        + "as the reference search does, and later changes reach the index."
    ) { context in
      let texts = searchCells.map(\.text)
      let store = try await context.store(with: searchCells.map(IndexedCell.init))
      try await store.migrate(
        MigrationPlan([
          .renameEntity("rename-cell", from: "Cell", to: "Note"),
          .renameField("rename-text", entity: "Note", from: "text", to: "body"),
        ]))
      guard let renamed = try await store.storedSchemas().first(where: { $0.name == "Note" }) else {
        throw CheckFailure("the store has no entity 'Note' after the renames")
      }
      try expectEqual(renamed.indexes, [.text(on: "body")], "the indexes after the renames")
      try await store.prepare(schemas: [renamed])
      for query in ["swift", "caf*", "\"cafe au lait\"", "file OR swift concurrency"] {
        let rows = try await store.fetchRows(
          Query(entity: "Note", filter: .matches(field: "body", query: query), sort: [.relevance("body")]))
        try expectEqual(
          rows.map { $0[0] }, referenceOrder(query, texts).map { Value.int($0) },
          "ids by relevance to \(query)")
      }
      try await store.apply(ChangeSet([.delete(entity: "Note", id: .int(2))]))
      let rows = try await store.fetchRows(
        Query(
          entity: "Note", filter: .matches(field: "body", query: "swift"), sort: [.relevance("body")],
          limit: 5))
      try expectEqual(rows.map { $0[0] }, [.int(1)], "ids matching swift after a delete")
    },
  ]
}

/// Checks one query on a store of ``IndexedCell``s holding exactly `rows` against the reference
/// search: ids, count, relevance order (both ways), a page, and the search with another filter.
func expectSameSearch(_ store: Store, _ query: String, _ rows: [(id: Int64, text: String?)]) async throws {
  let shown = query.unicodeScalars.count > 40 ? "a long query" : query.debugDescription
  let filtered = store.query(IndexedCell.self).filter(FieldRef("text").matches(query))
  guard let parsed = SearchReference.parse(query) else {
    _ = try await expectThrows(.invalidQuery, "query \(shown)") { try await filtered.fetch() }
    return
  }
  let sorted = rows.sorted { $0.id < $1.id }
  let texts = sorted.map(\.text)
  let expected = sorted.filter { SearchReference.matches(parsed, $0.text) }.map(\.id)
  try await expectIDs(filtered, expected, "ids matching \(shown)")
  try expectEqual(try await filtered.count(), expected.count, "count matching \(shown)")
  let ranked = referenceOrder(query, texts).map { sorted[Int($0) - 1].id }
  try await expectIDs(filtered.sort([.relevance("text")]), ranked, "ids by relevance to \(shown)")
  try await expectIDs(
    filtered.sort([.relevance("text")]).offset(1).limit(2), Array(ranked.dropFirst(1).prefix(2)),
    "page by relevance to \(shown)")
  var ascending = Sort.relevance("text")
  ascending.ascending = true
  let least = referenceOrder(query, texts, ascending: true).map { sorted[Int($0) - 1].id }
  try await expectIDs(
    filtered.sort([ascending]).limit(3), Array(least.prefix(3)), "least relevant first for \(shown)")
  try await expectIDs(
    filtered.filter(FieldRef("id") > Int64(3)).sort([.relevance("text")]).limit(4),
    Array(ranked.filter { $0 > 3 }.prefix(4)), "ids by relevance to \(shown) with id > 3")
}

/// Rows numbered 1, 2, … holding `texts`.
func numbered(_ texts: [String?]) -> [(id: Int64, text: String?)] {
  texts.enumerated().map { (Int64($0.offset + 1), $0.element) }
}
