import Foundation

/// `coffer-bench [--sizes N,N,…] [--systems KEY,…] [--gets N] [--pages N] [--suite-commits N]
/// [--rows N] [--commits N] [--naive-commits N] [--repetitions N] [--codec-rows N] [--skip-suite]
/// [--skip-plist] [--skip-codec] [--postgres-url URL] [--output DIR] [--no-write]`, or
/// `coffer-bench --profile SYSTEM scan|get|page|insert ROWS ROUNDS` to repeat one operation for a profiler,
/// or `coffer-bench --ticket-profile SYSTEM OPERATION ROWS ROUNDS` to do the same in the ticket workload,
/// or `coffer-bench --contention …` for the contention workload (see ``ContentionBenchmark``),
/// or `coffer-bench --transfers …` for two-row transfers against raw libpq (see ``TransferBenchmark``),
/// or `coffer-bench --copy …` for the copy benchmark (see ``CopyBenchmark``),
/// or `coffer-bench --sync …` for initial sync beside the copy, and `--follow` latency (see ``SyncBenchmark``),
/// or `coffer-bench --migration …` for the migration benchmark (see ``MigrationBenchmark``),
/// or `coffer-bench --migration-open …` for opening a store with a migration plan (see ``MigrationOpenBenchmark``),
/// or `coffer-bench --changes-floor …` for what any same-transaction feed adds to a commit (see ``ChangesFloorBenchmark``),
/// or `coffer-bench --remote …` for the coffer+http backend beside bare routes (see ``RemoteBenchmark``),
/// or `coffer-bench --postgres-gets …` for point gets beside pgbench and raw libpq (see ``PostgresGetsBenchmark``),
/// or `coffer-bench --unique-updates …` for updates on an entity with a unique index (see ``UniqueUpdateBenchmark``),
/// or `coffer-bench --standby-reads …` for point gets with reads spread over standbys (see ``StandbyReadsBenchmark``),
/// or `coffer-bench --queries …` for aggregates and eager loading (see ``QueryModelBenchmark``),
/// or `coffer-bench --cascade …` for deleting a row whose delete rules cascade (see ``CascadeBenchmark``),
/// or `coffer-bench --changes …` for what the change feed costs writers and how fast it reads (see ``ChangesBenchmark``),
/// or `coffer-bench --tickets …` for the second workload, issue-tracker tickets (see ``TicketBenchmark``),
/// or `coffer-bench --readers …` for readers beside a writer, and opening a store (see ``ReadersBenchmark``),
/// or `coffer-bench --search …` for a full-text search over chat messages beside raw FTS5 (see ``SearchBenchmark``),
/// or `coffer-bench --telemetry-overhead …` for point gets with metrics and a tracer on (see ``TelemetryBenchmark``);
/// `--telemetry` first bootstraps those for whatever follows.
///
/// Runs the cross-system suite, the property-list suite and the row-codec comparison, prints every figure, and writes
/// DIR/Performance.md, DIR/performance.csv and DIR/performance-ratios.svg (DIR defaults to the
/// repository's Docs folder). The PostgreSQL systems run against the server `--postgres-url` or
/// `COFFER_BENCH_POSTGRES_URL` names, and are left out without one.
struct Options {
  var sizes = [10_000, 100_000, 1_000_000]
  /// The systems `--systems` names, or nil for every available one.
  var chosen: [String]?
  var gets = 100_000
  var pages = 10_000
  var suiteCommits = 1_000
  var rows = 100_000
  var commits = 40
  var naiveCommits = 5
  var repetitions = 5
  var codecRows = 1_000_000
  var suite = true
  var plist = true
  var codec = true
  var output: String?
  var write = true

  init(_ arguments: [String]) throws {
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      func number() throws -> Int {
        guard let text = iterator.next(), let value = Int(text), value > 0 else {
          throw UsageError(message: "\(argument) needs a positive number")
        }
        return value
      }
      func list() throws -> [String] {
        guard let text = iterator.next() else { throw UsageError(message: "\(argument) needs a list") }
        return text.split(separator: ",").map(String.init)
      }
      switch argument {
      case "--sizes":
        sizes = try list().map { text in
          guard let size = Int(text), size >= 1_000 else {
            throw UsageError(message: "--sizes: \(text) < 1000")
          }
          return size
        }
      case "--systems": chosen = try list()
      case "--postgres-url":
        guard let url = iterator.next() else { throw UsageError(message: "--postgres-url needs a URL") }
        try PostgresServer.use(url)
      case "--gets": gets = try number()
      case "--pages": pages = try number()
      case "--suite-commits": suiteCommits = try number()
      case "--rows": rows = try number()
      case "--commits": commits = try number()
      case "--naive-commits": naiveCommits = try number()
      case "--repetitions": repetitions = try number()
      case "--skip-suite": suite = false
      case "--skip-plist": plist = false
      case "--codec-rows": codecRows = try number()
      case "--skip-codec": codec = false
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "unknown argument \(argument)")
      }
    }
    for key in chosen ?? [] where !SystemCatalog.available.contains(key) {
      if SystemCatalog.all.contains(where: { $0.key == key }), let reason = SystemCatalog.absence(key) {
        throw UsageError(message: "\(key) is left out: \(reason)")
      }
      throw UsageError(
        message: "unknown system \(key); this build has \(SystemCatalog.available.joined(separator: ", "))")
    }
  }

  /// The systems to run: those `--systems` names, or every available one.
  var systems: [String] { chosen ?? SystemCatalog.available }

  /// The systems left out of this run, grouped by why, for the log.
  var leftOut: [(reason: String, keys: [String])] {
    guard chosen == nil else { return [] }
    var groups: [(reason: String, keys: [String])] = []
    for (key, _) in SystemCatalog.all {
      guard let reason = SystemCatalog.absence(key) else { continue }
      if let index = groups.firstIndex(where: { $0.reason == reason }) {
        groups[index].keys.append(key)
      } else {
        groups.append((reason, [key]))
      }
    }
    return groups
  }
}

struct UsageError: Error { var message: String }

func machineDescription() -> String {
  let cores = ProcessInfo.processInfo.activeProcessorCount
  let memory = Double(ProcessInfo.processInfo.physicalMemory) / 1_073_741_824
  return String(
    format: "%d cores, %.0f GiB, %@", cores, memory, ProcessInfo.processInfo.operatingSystemVersionString)
}

/// Prints a line straight to standard output, unbuffered, so progress shows in a file or a pipe.
func say(_ line: String) {
  FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

do {
  var arguments = Array(CommandLine.arguments.dropFirst())
  if arguments.first == TelemetryBenchmark.bootstrapFlag {
    TelemetryBenchmark.bootstrap()
    arguments.removeFirst()
  }
  if arguments.first == TelemetryBenchmark.flag {
    try await TelemetryBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == SearchBenchmark.flag {
    try await SearchBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == MemoryProbe.flag {
    try await MemoryProbe.child(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == TicketProfileLoop.flag {
    try await TicketProfileLoop.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ProfileLoop.flag {
    try await ProfileLoop.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == TicketBenchmark.flag {
    try await TicketBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ReadersBenchmark.flag {
    try await ReadersBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == TransferBenchmark.flag {
    try await TransferBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ContentionBenchmark.flag {
    try await ContentionBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == SyncBenchmark.flag {
    try await SyncBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == CopyBenchmark.flag {
    try await CopyBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == QueryModelBenchmark.flag {
    try await QueryModelBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ChangesBenchmark.flag {
    try await ChangesBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == CascadeBenchmark.flag {
    try await CascadeBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ChangesFloorBenchmark.flag {
    try await ChangesFloorBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == RemoteBenchmark.flag {
    try await RemoteBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == PostgresGetsBenchmark.flag {
    try await PostgresGetsBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == UniqueUpdateBenchmark.flag {
    try await UniqueUpdateBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == StandbyReadsBenchmark.flag {
    try await StandbyReadsBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == MigrationOpenBenchmark.flag {
    try await MigrationOpenBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == MigrationBenchmark.flag {
    try await MigrationBenchmark.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ChangesProfileLoop.flag {
    try await ChangesProfileLoop.run(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == ChangesWakeBenchmark.writerFlag {
    try await ChangesWakeBenchmark.writer(Array(arguments.dropFirst()))
    exit(0)
  }
  if arguments.first == CopyProbe.flag {
    try await CopyProbe.child(Array(arguments.dropFirst()))
    exit(0)
  }
  let options = try Options(arguments)
  let command = benchCommand(arguments)
  var lines = [
    "# Performance",
    "",
    "Written by `\(command)`; every figure below was printed by that run. Medians of five",
    "repetitions (one at 1,000,000 rows); ratios are taken within the same run, with the systems",
    "interleaved. Machine: \(machineDescription()).",
  ]
  if options.systems.contains(where: SystemCatalog.postgresKeys.contains) {
    lines.append("PostgreSQL: \(PostgresServer.describe()).")
  }
  let headerEnd = lines.count
  let load = MachineLoad()
  lines.append("")
  var csv = ["suite,operation,system,rows,value,unit"]
  var svg: String?

  let suite = Suite(
    sizes: options.sizes, gets: options.gets, pages: options.pages, commits: options.suiteCommits,
    keys: options.systems)
  if options.suite {
    say("coffer-bench: \(options.systems.joined(separator: ", "))")
    for group in options.leftOut {
      say("coffer-bench: left out \(group.keys.joined(separator: ", ")): \(group.reason)")
    }
    let results = try await suite.run { say($0) }
    lines += SuiteReport.markdown(results, suite: suite)
    csv += SuiteReport.csv(results)
    let chartRows = options.sizes.contains(100_000) ? 100_000 : options.sizes[0]
    svg = Chart.svg(results, rows: chartRows)
  }
  if options.plist {
    say("coffer-bench: property-list suite, \(options.rows) rows")
    let plist = PlistBenchmark(
      rows: options.rows, commits: options.commits, naiveCommits: options.naiveCommits,
      repetitions: options.repetitions)
    let results = try await plist.run { say($0) }
    lines += PlistReport.markdown(results, rows: options.rows)
    csv += PlistReport.csv(results, rows: options.rows)
  }
  if options.codec {
    say("coffer-bench: row codecs, \(options.codecRows) messages")
    let results = try await CodecBenchmark.run(rows: options.codecRows, repetitions: options.repetitions) {
      say($0)
    }
    lines.append(CodecBenchmark.markdown(results, rows: options.codecRows))
    csv += results.map {
      "codec,\($0.operation),\($0.system),\(options.codecRows),\(Measure.seconds($0.median)),seconds"
    }
  }
  let measuresServer = options.suite && options.systems.contains(where: SystemCatalog.postgresKeys.contains)
  let serverNote = measuresServer ? " Other processes include the PostgreSQL server this run measures." : ""
  lines.insert(load.finish().sentence + serverNote, at: headerEnd)
  lines.insert(contentsOf: ["", PerformanceSections.otherReports], at: headerEnd + 1)
  let markdown = lines.joined(separator: "\n")
  say(markdown)
  if options.write {
    let output = reportDirectory(options.output)
    try PerformanceSections.keepingParts(markdown, in: output).write(
      toFile: output + "/" + PerformanceSections.fileName, atomically: true, encoding: .utf8)
    try (csv.joined(separator: "\n") + "\n").write(
      toFile: output + "/performance.csv", atomically: true, encoding: .utf8)
    if let svg {
      try svg.write(toFile: output + "/performance-ratios.svg", atomically: true, encoding: .utf8)
    }
    say("Wrote \(output)/Performance.md, performance.csv and performance-ratios.svg")
  }
} catch let error as UsageError {
  say("coffer-bench: \(error.message)")
  exit(2)
} catch {
  say("coffer-bench: \(error)")
  exit(1)
}
