import Coffer
import CofferStores
import Foundation

/// The migration benchmark: a migration plan renaming a field, then one converting a field's
/// kind, over the workload's chat messages on each backend, against the raw C library doing the
/// same in the same run.
///
/// For each engine: a store is filled through Coffer (not timed), then `Store.migrate` runs a
/// plan renaming `text` to `body`, then the plan grown by a step converting `threadID` (indexed
/// with `date`) from Int64 to decimal text. The baselines fill the raw C systems of the suite
/// with the same messages (not timed) and then, on SQLite, run `ALTER TABLE … RENAME COLUMN` and
/// the new-table `INSERT … SELECT CAST(…)` that SQLite's documentation prescribes for a type
/// change; on LMDB, rewrite every row in place for the rename (a rename changes no byte of a
/// raw row) and re-encode every row with its index rebuilt for the conversion. The goal: each
/// within 1.5x of the raw C figure. With a PostgreSQL server named (`--postgres-url` or
/// `COFFER_BENCH_POSTGRES_URL`), the `postgres` engine runs too, against raw libpq's
/// `ALTER TABLE … RENAME COLUMN` and `ALTER COLUMN … TYPE text USING`; the issue sets no goal
/// there, so its ratios are shown alone. The property-list and memory stores have no C library;
/// their times are reported alone.
///
/// `coffer-bench --migration [--migration-rows N] [--migration-engines sqlite,lmdb,plist,memory,postgres]
/// [--postgres-url URL] [--output DIR] [--no-write]`
enum MigrationBenchmark {
  static let flag = "--migration"
  /// Each step must take at most this many times the raw C figure.
  static let goal = 1.5

  /// How many renames are timed: `text` to `body`, back, and so on, ending on `body`. The
  /// first also makes the store's record of migrations; the goal judges their median.
  static let renameCount = 9
  /// The renames, each a step of its own.
  static let renames: [MigrationStep] = (0..<renameCount).map { number in
    let (from, to) = number.isMultiple(of: 2) ? ("text", "body") : ("body", "text")
    return MigrationStep.renameField("bench-rename-\(number)", entity: "ChatMessage", from: from, to: to)
  }
  static let convert = MigrationStep.changeKind(
    "bench-thread-as-text", entity: "ChatMessage", field: "threadID", to: .string, using: .intToString)

  /// What one engine gave.
  struct Result {
    var engine: String
    var rows: Int
    /// The median rename, and the first (which also made the record of migrations).
    var renameSeconds: Double
    var firstRename: Double
    var convertSeconds: Double
    var rawRename: Double?
    var rawFirstRename: Double?
    var rawConvert: Double?
    var baseline: String?
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 1_000_000
    var engines = ["sqlite", "lmdb", "plist", "memory"]
    var enginesNamed = false
    var output: String?
    var write = true
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--migration-rows":
        guard let text = iterator.next(), let number = Int(text), number > 0 else {
          throw UsageError(message: "--migration-rows needs a positive number")
        }
        rows = number
      case "--migration-engines":
        guard let text = iterator.next() else {
          throw UsageError(message: "--migration-engines needs a list")
        }
        engines = text.split(separator: ",").map(String.init)
        enginesNamed = true
      case "--postgres-url":
        guard let url = iterator.next() else { throw UsageError(message: "--postgres-url needs a URL") }
        try PostgresServer.use(url)
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "unknown argument \(argument) for \(flag)")
      }
    }
    if !enginesNamed, PostgresServer.absence == nil { engines.append("postgres") }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say("coffer-bench: migration, \(rows.formatted()) messages, engines \(engines.joined(separator: ", "))")
    let messages = Workload.messages(rows)
    var results: [Result] = []
    for engine in engines {
      results.append(try await measure(engine, messages: messages))
    }
    let lines = report(results, command: command, load: load.finish())
    let text = lines.joined(separator: "\n")
    print(text)
    if write { try writeReport(text, named: "MigrationSpeed.md", to: output) }
  }

  static func measure(_ engine: String, messages: [ChatMessage]) async throws -> Result {
    let folder = try ScratchFolder("migration-\(engine)")
    defer { folder.remove() }
    let url = try folder.storeURL(engine, named: "migration-bench", database: "coffer_bench_migration")
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare([ChatMessage.self])
    try await store.insert(messages)
    var renameTimes: [Double] = []
    for count in 1...renameCount {
      renameTimes.append(
        try await CopyBenchmark.seconds {
          try await store.migrate(MigrationPlan(Array(renames.prefix(count))))
        })
    }
    let convertSeconds = try await CopyBenchmark.seconds {
      try await store.migrate(MigrationPlan(renames + [convert]))
    }
    let renameSeconds = median(renameTimes)
    let schema = try await store.storedSchemas().first { $0.name == "ChatMessage" }
    guard schema?.field(named: "threadID")?.kind == .string, schema?.field(named: "body") != nil,
      try await store.migrations().count == renameCount + 1
    else {
      throw BenchError("\(engine): the plan did not leave the schema it should")
    }
    try await store.close()
    say(
      String(
        format: "%@: rename %.3f s, convert %.2f s (%.0f rows/s)", engine, renameSeconds, convertSeconds,
        Double(messages.count) / convertSeconds))

    var result = Result(
      engine: engine, rows: messages.count, renameSeconds: renameSeconds, firstRename: renameTimes[0],
      convertSeconds: convertSeconds)
    switch engine {
    case "sqlite":
      let raw = RawSQLiteSystem()
      try await timeRaw(
        raw, messages, in: folder.path, into: &result, rename: raw.renameColumn(_:to:),
        convert: raw.convertThreadToText)
      result.baseline =
        "raw C libsqlite3: `ALTER TABLE RENAME COLUMN`, one transaction each; new table + `INSERT … SELECT CAST(threadID AS TEXT)` + "
        + "`DROP TABLE` + `ALTER TABLE RENAME` + `CREATE INDEX`, one transaction each"
    case "lmdb":
      let raw = RawLMDBSystem()
      try await timeRaw(
        raw, messages, in: folder.path, into: &result, rename: { _, _ in try raw.rewriteRows() },
        convert: raw.convertThreadToText)
      result.baseline =
        "raw C liblmdb: every row rewritten in place (rename); every row re-encoded in place and the (thread, "
        + "date) index emptied and filled again (conversion), one transaction each"
    case "postgres":
      let raw = RawPostgresSystem()
      try await timeRaw(
        raw, messages, in: folder.path, into: &result, rename: raw.renameColumn(_:to:),
        convert: raw.convertThreadToText)
      result.baseline =
        "raw C libpq: `ALTER TABLE RENAME COLUMN`, one transaction each; `ALTER COLUMN threadID TYPE text USING "
        + "threadID::text` (the table and its indexes rewritten by the server), one transaction"
    default:
      break
    }
    if let rawRename = result.rawRename, let rawConvert = result.rawConvert {
      say(String(format: "%@: raw C rename %.4f s (median), convert %.2f s", engine, rawRename, rawConvert))
    }
    return result
  }

  /// Fills a raw C system with the messages (not timed), then times its renames of `text` to
  /// `body` and back, as many as Coffer's, and its conversion, into `result`.
  static func timeRaw(
    _ raw: some BenchSystem, _ messages: [ChatMessage], in folder: String, into result: inout Result,
    rename: (String, String) throws -> Void, convert: () throws -> Void
  ) async throws {
    try await raw.create(in: folder)
    try await raw.bulkInsert(messages)
    var times: [Double] = []
    for number in 0..<renameCount {
      let (from, to) = number.isMultiple(of: 2) ? ("text", "body") : ("body", "text")
      times.append(try await CopyBenchmark.seconds { try rename(from, to) })
    }
    (result.rawRename, result.rawFirstRename) = (median(times), times[0])
    result.rawConvert = try await CopyBenchmark.seconds { try convert() }
    try await raw.close()
  }

  /// The middle value (of an odd count; the upper middle of an even one).
  static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }

  static func report(_ results: [Result], command: String, load: MachineLoad.Result) -> [String] {
    var lines = [
      "# Migration speed",
      "",
      "Written by `\(command)`: \(renameCount) renames of `ChatMessage.text` to `body` and back, each a "
        + "step of its own, then a step converting `threadID` (indexed with `date`) from Int64 to text, with "
        + "`Store.migrate` on each backend, against the raw C library doing the same in the same run. Goal: "
        + "within \(goal)x of raw C on SQLite and LMDB, for the median rename and the conversion (the first "
        + "rename, which on Coffer also makes the store's record of migrations, is shown beside it). "
        + "\(load.sentence) Machine: \(machineDescription()).",
      "",
      "| backend | rows | rename (median) | raw C rename | ratio | first rename | raw C first | conversion "
        + "| raw C conversion | ratio | goal |",
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for result in results {
      func seconds(_ value: Double?) -> String {
        guard let value else { return "—" }
        return value < 0.1 ? String(format: "%.2f ms", value * 1000) : String(format: "%.3f s", value)
      }
      func ratio(_ coffer: Double, _ raw: Double?) -> String {
        raw.map { String(format: "%.2fx", coffer / $0) } ?? "—"
      }
      var verdict = "no C library"
      if result.engine == "postgres" {
        verdict = "no goal set"
      } else if let rawRename = result.rawRename, let rawConvert = result.rawConvert {
        let met = result.renameSeconds <= goal * rawRename && result.convertSeconds <= goal * rawConvert
        verdict = met ? "met" : "**not met**"
      }
      lines.append(
        "| \(result.engine) | \(result.rows.formatted()) | \(seconds(result.renameSeconds)) | "
          + "\(seconds(result.rawRename)) | \(ratio(result.renameSeconds, result.rawRename)) | "
          + "\(seconds(result.firstRename)) | \(seconds(result.rawFirstRename)) | "
          + "\(seconds(result.convertSeconds)) | \(seconds(result.rawConvert)) | "
          + "\(ratio(result.convertSeconds, result.rawConvert)) | \(verdict) |")
    }
    lines.append("")
    for result in results {
      if let baseline = result.baseline { lines.append("- \(result.engine) baseline: \(baseline).") }
    }
    lines.append(
      "- Coffer renames a field in the catalog without touching a row; a conversion reads every row once and "
        + "writes it once into a new table (or databases) that replaces the old one in the same transaction.")
    lines.append("")
    return lines
  }
}
