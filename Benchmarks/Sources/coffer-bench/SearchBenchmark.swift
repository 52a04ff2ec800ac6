@_spi(Backend) import Coffer
import CofferStores
import Foundation
import RawSQLite

/// `coffer-bench --search [--engines E,…] [--rows N] [--rounds N]`: a full-text search over N
/// generated chat messages returning the top 20 by relevance (issue 49), on each engine beside
/// raw FTS5 doing the same query through SQLite's C API, and the bulk insert of the messages.
///
/// Coffer's search is Coffer's definition of words and BM25 on every backend, still evaluated
/// by a scan (see the Searching article): these figures are what that costs. Prints one
/// Markdown table with the machine's load, for Docs/Performance.md.
enum SearchBenchmark {
  static let flag = "--search"

  static let words = [
    "swift", "concurrency", "actor", "task", "deploy", "release", "build", "test", "server", "client",
    "lunch",
    "meeting", "today", "tomorrow", "review", "merge", "branch", "crash", "fix", "ship", "café", "naïve",
    "database", "index", "query", "search", "message", "thread", "coffee", "weekend",
  ]
  static let query = "deploy release"

  static let schema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Message", fields: [Field("id", .int), Field("thread", .int), Field("body", .string)],
        idField: "id")
    } catch {
      preconditionFailure("The benchmark's schema is well formed: \(error)")
    }
  }()

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

  static func run(_ arguments: [String]) async throws {
    var engines = ["memory", "sqlite", "lmdb"]
    var rows = 1_000_000
    var rounds = 5
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      func number() throws -> Int {
        guard let text = iterator.next(), let value = Int(text), value > 0 else {
          throw UsageError(message: "\(argument) needs a positive number")
        }
        return value
      }
      switch argument {
      case "--engines": engines = (iterator.next() ?? "").split(separator: ",").map(String.init)
      case "--rows": rows = try number()
      case "--rounds": rounds = try number()
      default: throw UsageError(message: "\(flag): unknown argument \(argument)")
      }
    }
    print("Search: \(rows) messages, query \(query.debugDescription), top 20 by relevance, \(rounds) rounds")
    print("")
    print("| system | bulk insert | search p50 | rows found |")
    print("|---|---|---|---|")
    let raw = try rawFTS5(rows: rows, rounds: rounds)
    print(
      "| raw FTS5 (C, bm25) | \(Measure.milliseconds(raw.insert)) | \(Measure.milliseconds(raw.search)) | \(raw.found) |"
    )
    for engine in engines {
      let figure = try await coffer(engine, rows: rows, rounds: rounds)
      print(
        "| coffer-\(engine) | \(Measure.milliseconds(figure.insert)) | \(Measure.milliseconds(figure.search)) | \(figure.found) |"
      )
    }
    if let load = loadAverage() {
      print("\nLoad average (1 min) at the end: \(String(format: "%.2f", load))")
    }
  }

  static func coffer(_ engine: String, rows: Int, rounds: Int) async throws
    -> (insert: Duration, search: Duration, found: Int)
  {
    let folder = try ScratchFolder("search-\(engine)")
    defer { folder.remove() }
    let url = try folder.storeURL(engine, named: "search-bench", database: "coffer_bench_search")
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: [schema])
    let clock = ContinuousClock()
    let start = clock.now
    let source = RowSource(count: rows) { index in
      let id = Int64(index + 1)
      return Row([.int(id), .int(id % 1_000), .string(body(id))])
    }
    try await store.apply(ChangeSet([.insertMany(entity: schema.name, rows: source)]))
    let insert = clock.now - start
    var found = 0
    let search = try await Measure.median(repetitions: rounds) {
      found = try await store.fetchRows(
        Query(
          entity: schema.name, filter: .matches(field: "body", query: query), sort: [.relevance("body")],
          limit: 20)
      ).count
    }
    try await store.close()
    return (insert, search, found)
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
