@_spi(Backend) import Coffer
import CofferStores
import Foundation
import RawSQLite

/// `coffer-bench --search [--engines E,…] [--rows N] [--repetitions N] [--scan-rounds N]
/// [--output DIR] [--no-write]`: full-text searches over N generated chat messages (1,000,000 unless told)
/// returning the top 20 by relevance (issue 49), on each engine with a text index on the body
/// and without one (the scan every search is without an index), beside raw FTS5 doing the
/// first query through SQLite's C API; and the bulk insert of the messages with and without the
/// text index. Memory and plist keep a text index in the core, SQLite an FTS5 table of Coffer's
/// words; the other engines record the index and still scan, so their two rows should agree.
///
/// Prints one Markdown table with the machine's load and writes Docs/TextSearchSpeed.md.
enum SearchBenchmark {
  static let flag = "--search"

  static let words = [
    "swift", "concurrency", "actor", "task", "deploy", "release", "build", "test", "server", "client",
    "lunch",
    "meeting", "today", "tomorrow", "review", "merge", "branch", "crash", "fix", "ship", "café", "naïve",
    "database", "index", "query", "search", "message", "thread", "coffee", "weekend",
  ]
  static let query = "deploy release"
  /// The queries timed: two common words, a rare word, a prefix and a phrase.
  static let queries = [query, "weekend", "coff*", "\"merge branch\""]

  static func schema(textIndex: Bool) -> EntitySchema {
    do {
      return try EntitySchema(
        name: "Message", fields: [Field("id", .int), Field("thread", .int), Field("body", .string)],
        idField: "id", indexes: textIndex ? [.text(on: "body")] : [])
    } catch {
      preconditionFailure("The benchmark's schema is well formed: \(error)")
    }
  }

  /// Message `n`'s text: eight words picked by a fixed generator, the first words more often.
  static func body(_ n: Int64) -> String {
    var state = UInt64(bitPattern: n) &* 0x9E37_79B9_7F4A_7C15 | 1
    var text = ""
    for index in 0..<8 {
      state ^= state << 13
      state ^= state >> 7
      state ^= state << 17
      let a = Int(state % UInt64(words.count))
      let b = Int((state >> 32) % UInt64(words.count))
      if index > 0 { text += " " }
      text += words[min(a, b)]
    }
    return text
  }

  /// One engine with or without the text index: the bulk insert, and each query's times.
  struct Figure {
    var engine: String
    var indexed: Bool
    var insert: Duration
    var searches: [(p50: Duration, p99: Duration, found: Int)]
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 1_000_000
    var scanRounds = 3
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--engines", repetitions: 50, engines: ["memory"]
    ) { argument, number in
      switch argument {
      case "--rows": rows = try number()
      case "--scan-rounds": scanRounds = try number()
      default: return false
      }
      return true
    }
    let rounds = options.repetitions
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say("coffer-bench: \(rows) messages, top 20 by relevance, with and without a text index")
    let raw = try rawFTS5(rows: rows, rounds: rounds)
    say(
      "raw FTS5: insert \(Measure.milliseconds(raw.insert)), search p50 \(Measure.milliseconds(raw.search))")
    var figures: [Figure] = []
    for engine in options.engines {
      for indexed in [true, false] {
        // Memory, plist and SQLite answer from a text index; the others scan either way.
        let answersFromIndex = indexed && ["memory", "plist", "sqlite"].contains(engine)
        let figure = try await coffer(
          engine, indexed: indexed, rows: rows, rounds: answersFromIndex ? rounds : scanRounds)
        say(
          "\(engine) \(indexed ? "text index" : "no index"): insert \(Measure.milliseconds(figure.insert)), "
            + figure.searches.map { "p50 \(Measure.milliseconds($0.p50))" }.joined(separator: ", "))
        figures.append(figure)
      }
    }
    let text = report(
      figures, raw: raw, rows: rows, rounds: rounds, scanRounds: scanRounds, command: command,
      load: load.finish()
    ).joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "TextSearchSpeed.md", to: options.output) }
  }

  static func report(
    _ figures: [Figure], raw: (insert: Duration, search: Duration, found: Int), rows: Int, rounds: Int,
    scanRounds: Int, command: String, load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# Full-text search speed",
      "",
      "Written by `\(command)`: \(rows.formatted()) generated chat messages (eight words each from a vocabulary "
        + "of \(words.count)), the top 20 by relevance (BM25) for each query, p50 and p99 of \(rounds) searches "
        + "answered from a text index on the body and of \(scanRounds) that read every row. Bulk insert: all the "
        + "messages in one batch. Memory and plist answer from their text index, SQLite from an FTS5 table of "
        + "Coffer's words; another engine records the index and still reads every row. \(load.sentence) Machine: \(machineDescription()).",
      "",
      "| engine | text index | bulk insert | "
        + queries.map { "`\($0)` p50 / p99 (rows found)" }.joined(separator: " | ") + " |",
      "|---|---|---:|" + queries.map { _ in "---:|" }.joined(),
    ]
    for figure in figures {
      let cells = figure.searches.map {
        "\(Measure.milliseconds($0.p50)) / \(Measure.milliseconds($0.p99)) (\($0.found))"
      }
      lines.append(
        "| \(figure.engine) | \(figure.indexed ? "yes" : "no") | \(Measure.milliseconds(figure.insert)) | "
          + cells.joined(separator: " | ") + " |")
    }
    lines.append(
      "| raw FTS5 (C, bm25) | own | \(Measure.milliseconds(raw.insert)) | \(Measure.milliseconds(raw.search)) p50 "
        + "(\(raw.found)) |" + queries.dropFirst().map { _ in " |" }.joined())
    for engine in Set(figures.map(\.engine)).sorted() {
      guard let with = figures.first(where: { $0.engine == engine && $0.indexed }),
        let without = figures.first(where: { $0.engine == engine && !$0.indexed })
      else { continue }
      lines.append("")
      lines.append(
        "\(engine): bulk insert with the text index takes "
          + String(format: "%.2fx", Measure.seconds(with.insert) / Measure.seconds(without.insert))
          + " the time without it.")
    }
    lines.append("")
    return lines
  }

  static func percentile(_ samples: [Duration], _ fraction: Double) -> Duration {
    let sorted = samples.sorted()
    guard !sorted.isEmpty else { return .zero }
    return sorted[min(sorted.count - 1, Int((Double(sorted.count - 1) * fraction).rounded(.up)))]
  }

  static func coffer(_ engine: String, indexed: Bool, rows: Int, rounds: Int) async throws -> Figure {
    let folder = try ScratchFolder("search-\(engine)")
    defer { folder.remove() }
    let url = try folder.storeURL(engine, named: "search-bench", database: "coffer_bench_search")
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    let schema = Self.schema(textIndex: indexed)
    try await store.prepare(schemas: [schema])
    let clock = ContinuousClock()
    let start = clock.now
    let source = RowSource(count: rows) { index in
      let id = Int64(index + 1)
      return Row([.int(id), .int(id % 1_000), .string(body(id))])
    }
    try await store.apply(ChangeSet([.insertMany(entity: schema.name, rows: source)]))
    let insert = clock.now - start
    var searches: [(p50: Duration, p99: Duration, found: Int)] = []
    for text in queries {
      var found = 0
      var samples: [Duration] = []
      for _ in 0..<rounds {
        let begin = clock.now
        found = try await store.fetchRows(
          Query(
            entity: schema.name, filter: .matches(field: "body", query: text), sort: [.relevance("body")],
            limit: 20)
        ).count
        samples.append(clock.now - begin)
      }
      searches.append((percentile(samples, 0.5), percentile(samples, 0.99), found))
    }
    try await store.close()
    return Figure(engine: engine, indexed: indexed, insert: insert, searches: searches)
  }

  static func rawFTS5(rows: Int, rounds: Int) throws -> (insert: Duration, search: Duration, found: Int) {
    let folder = try ScratchFolder("search-fts5")
    defer { folder.remove() }
    let connection = try RawSQLiteConnection(path: folder.path + "/fts5.sqlite")
    defer { connection.close() }
    try connection.execute(
      "CREATE VIRTUAL TABLE message USING fts5(body, tokenize = 'unicode61 remove_diacritics 2')")
    let clock = ContinuousClock()
    let start = clock.now
    try connection.execute("BEGIN")
    let insert = try connection.statement("INSERT INTO message(rowid, body) VALUES (?1, ?2)")
    for index in 1...rows {
      let text = body(Int64(index))
      sqlite3_bind_int64(insert, 1, Int64(index))
      sqlite3_bind_text(insert, 2, text, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
      _ = try connection.step(insert)
      sqlite3_reset(insert)
    }
    try connection.execute("COMMIT")
    let inserted = clock.now - start
    let select = try connection.statement(
      "SELECT rowid FROM message WHERE message MATCH ?1 ORDER BY rank LIMIT 20")
    var found = 0
    var samples: [Duration] = []
    for _ in 0..<rounds {
      let begin = clock.now
      found = 0
      sqlite3_bind_text(select, 1, query, -1, unsafeBitCast(-1, to: sqlite3_destructor_type.self))
      while try connection.step(select) { found += 1 }
      sqlite3_reset(select)
      samples.append(clock.now - begin)
    }
    return (inserted, Measure.median(samples), found)
  }
}
