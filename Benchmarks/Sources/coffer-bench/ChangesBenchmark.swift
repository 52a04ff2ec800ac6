@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// The change-feed benchmark (issue 43): what recording the feed costs a writer, and how fast
/// the feed reads back.
///
/// Per engine, with the feed off and on (`?changes=on`): a bulk insert of `--changes-rows` rows
/// (default 10,000) in one batch into an empty store, an update of 10% of them by id in one
/// batch, and a single-row insert (one durable commit on SQLite and LMDB) into the full store.
/// Each is the median of `--repetitions` (default 5; the single commit takes 20 times as many),
/// the store with the feed off and the one with it on taking turns run by run.
/// Then the feed is read from the start — the bulk insert's batch and 1,000 one-row batches —
/// and the rate given in row changes per second. Then, on the backends several processes share,
/// how soon another process's commit reaches a follower here (``ChangesWakeBenchmark``). Goals: feed on ≤ 1.25x feed off for the bulk
/// insert and the update, ≤ 1.1x for the single commit; reading ≥ 1,000,000 changes/s on memory
/// and LMDB, ≥ 250,000 on SQLite; a follower woken at p50 ≤ 5 ms and p99 ≤ 50 ms. Every figure
/// carries the load average over one minute when it was measured.
///
/// `coffer-bench --changes [--changes-rows N] [--repetitions N] [--changes-engines memory,sqlite,lmdb]
/// [--output DIR] [--no-write]`
enum ChangesBenchmark {
  static let flag = "--changes"

  struct Figure {
    var engine: String
    var workload: String
    var off: Duration
    var on: Duration
    var goal: Double
    var load: Double?
  }

  struct ReadFigure {
    var engine: String
    var changes: Int
    var time: Duration
    var load: Double?
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 10_000
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--changes-engines", repetitions: 5,
      engines: ["memory", "sqlite", "lmdb"]
    ) { argument, number in
      guard argument == "--changes-rows" else { return false }
      rows = try number()
      return true
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: change feed, \(rows.formatted()) rows, \(options.repetitions) repetitions, engines "
        + options.engines.joined(separator: ", "))
    var figures: [Figure] = []
    var reads: [ReadFigure] = []
    var wakes: [ChangesWakeBenchmark.Figure] = []
    for engine in options.engines {
      let folder = try ScratchFolder("changes-\(engine)")
      defer { folder.remove() }
      let medians = try await measureWrites(
        engine, rows: rows, repetitions: options.repetitions, folder: folder)
      for (index, (workload, goal)) in [("bulk insert", 1.25), ("update 10%", 1.25), ("single commit", 1.1)]
        .enumerated()
      {
        guard let off = medians[false]?[index], let on = medians[true]?[index] else { continue }
        let figure = Figure(
          engine: engine, workload: workload, off: off, on: on, goal: goal, load: loadAverage())
        say(
          "\(engine), \(workload): off \(time(off)), on \(time(on)), "
            + String(format: "%.2fx", ratio(figure)))
        figures.append(figure)
      }
      let read = try await measureRead(engine, rows: rows, repetitions: options.repetitions, folder: folder)
      say("\(engine), reading the feed: \(rate(read)) changes/s")
      reads.append(read)
      guard engine != "memory" else { continue }
      let wake = try await ChangesWakeBenchmark.measure(
        engine, url: try url(engine, feed: true, name: "wake", folder: folder))
      say(
        "\(engine), another process's commit reaches a follower: p50 "
          + String(format: "%.2f ms, p99 %.2f ms", wake.percentile(0.5), wake.percentile(0.99)))
      wakes.append(wake)
    }
    let text = report(
      figures, reads, wakes, rows: rows, repetitions: options.repetitions, command: command,
      load: load.finish()
    ).joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "ChangeFeedSpeed.md", to: options.output) }
  }

  static let schema: EntitySchema = {
    do {
      return try EntitySchema(
        name: "Event",
        fields: [Field("id", .int), Field("kind", .string), Field("amount", .int), Field("note", .string)],
        idField: "id", indexes: [.on("kind")])
    } catch {
      preconditionFailure("The benchmark's schema is well formed: \(error)")
    }
  }()

  static func row(_ id: Int64, version: Int64 = 0) -> Row {
    Row([.int(id), .string("kind \(id % 7)"), .int(id &* 31 &+ version), .string("event \(id) v\(version)")])
  }

  static func url(_ engine: String, feed: Bool, name: String, folder: ScratchFolder) throws -> String {
    // A database of its own for each: a store with the feed off and one with it on are open at once.
    let url = try folder.storeURL(
      engine, named: name, database: "coffer_bench_changes_\(feed ? "on" : "off")")
    guard feed else { return url }
    return url + (url.contains("?") ? "&" : "?") + "changes=on"
  }

  /// The medians of the bulk insert, the 10% update and the single commit, with the feed off
  /// (`false`) and on (`true`). The two stores take turns run by run (which goes first
  /// alternating), so that the machine's drift falls on both alike.
  static func measureWrites(_ engine: String, rows: Int, repetitions: Int, folder: ScratchFolder)
    async throws -> [Bool: [Duration]]
  {
    var round = 0
    func fresh(_ feed: Bool) async throws -> Store {
      round += 1
      let opened = try await Store.open(
        url: try url(engine, feed: feed, name: "writes-\(feed)-\(round)", folder: folder),
        registry: .makeBuiltIn())
      try await opened.prepare(schemas: [schema])
      return opened
    }
    let clock = ContinuousClock()
    var samples: [Bool: [[Duration]]] = [false: [[], [], []], true: [[], [], []]]
    func timed(_ feed: Bool, _ workload: Int, _ body: () async throws -> Void) async throws {
      let start = clock.now
      try await body()
      samples[feed, default: [[], [], []]][workload].append(clock.now - start)
    }
    func turns(_ turn: Int) -> [Bool] { turn.isMultiple(of: 2) ? [false, true] : [true, false] }
    let source = RowSource(count: rows) { row(Int64($0)) }
    for repetition in 0..<repetitions {
      for feed in turns(repetition) {
        let store = try await fresh(feed)
        try await timed(feed, 0) {
          try await store.apply(ChangeSet([.insertMany(entity: schema.name, rows: source)]))
        }
        try await store.close()
      }
    }
    var full: [Bool: Store] = [:]
    for feed in [false, true] {
      let store = try await fresh(feed)
      try await store.apply(ChangeSet([.insertMany(entity: schema.name, rows: source)]))
      full[feed] = store
    }
    for version in Int64(1)...Int64(repetitions) {
      let changes = ChangeSet(
        stride(from: 0, to: Int64(rows), by: 10).map {
          ChangeSet.Operation.update(entity: schema.name, row: row($0, version: version))
        })
      for feed in turns(Int(version)) {
        guard let store = full[feed] else { continue }
        try await timed(feed, 1) { try await store.apply(changes) }
      }
    }
    var next = Int64(rows)
    for commit in 0..<(repetitions * 20) {
      next += 1
      let change = ChangeSet([.insert(entity: schema.name, row: row(next))])
      for feed in turns(commit) {
        guard let store = full[feed] else { continue }
        try await timed(feed, 2) { try await store.apply(change) }
      }
    }
    for store in full.values { try await store.close() }
    return samples.mapValues { $0.map(Measure.median) }
  }

  /// Reading a feed of one bulk batch and 1,000 one-row batches from the start, the median of
  /// `repetitions` reads.
  static func measureRead(_ engine: String, rows: Int, repetitions: Int, folder: ScratchFolder) async throws
    -> ReadFigure
  {
    let store = try await Store.open(
      url: try url(engine, feed: true, name: "read", folder: folder), registry: .makeBuiltIn())
    try await store.prepare(schemas: [schema])
    try await store.apply(
      ChangeSet([.insertMany(entity: schema.name, rows: RowSource(count: rows) { row(Int64($0)) })]))
    for id in 0..<Int64(1_000) {
      try await store.apply(ChangeSet([.update(entity: schema.name, row: row(id, version: 1))]))
    }
    var changes = 0
    let median = try await Measure.median(repetitions: repetitions) {
      changes = 0
      for try await batch in store.changes() { changes += batch.changes.count }
    }
    try await store.close()
    guard changes == rows + 1_000 else {
      throw BenchError("\(engine): the feed held \(changes) row changes, expected \(rows + 1_000)")
    }
    return ReadFigure(engine: engine, changes: changes, time: median, load: loadAverage())
  }

  static func loadText(_ load: Double?) -> String { load.map { String(format: "%.2f", $0) } ?? "—" }

  static func ratio(_ figure: Figure) -> Double { Measure.seconds(figure.on) / Measure.seconds(figure.off) }

  static func rate(_ read: ReadFigure) -> String {
    Int((Double(read.changes) / Measure.seconds(read.time)).rounded()).formatted()
  }

  static func readGoal(_ engine: String) -> Double {
    engine == "memory" || engine == "lmdb" ? 1_000_000 : 250_000
  }

  /// A duration in milliseconds, to the hundredth below ten; in microseconds below a tenth.
  static func time(_ duration: Duration) -> String {
    let milliseconds = Measure.seconds(duration) * 1000
    if milliseconds < 0.1 { return String(format: "%.1f µs", milliseconds * 1000) }
    return String(format: milliseconds < 10 ? "%.2f ms" : "%.1f ms", milliseconds)
  }

  static func report(
    _ figures: [Figure], _ reads: [ReadFigure], _ wakes: [ChangesWakeBenchmark.Figure], rows: Int,
    repetitions: Int, command: String,
    load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# Change-feed speed",
      "",
      "Written by `\(command)`: the same writes with the change feed off and on (`?changes=on`) — a bulk insert "
        + "of \(rows.formatted()) rows in one batch into an empty store, an update of 10% of them by id in one batch, "
        + "and a one-row insert into the full store — each the median of \(repetitions) runs (the one-row insert of "
        + "\(repetitions * 20)), the feed-off and feed-on stores taking turns run by run; then reading the whole feed of one bulk batch and 1,000 one-row batches; then, "
        + "where processes share a store, another process committing \(ChangesWakeBenchmark.commits) one-row "
        + "batches 10 ms apart while a follower here notes when each arrives (the first "
        + "\(ChangesWakeBenchmark.warmUp) left out). \(load.sentence) The load column is the load average over "
        + "one minute when the figure was taken. Machine: \(machineDescription()).",
      "",
      "| backend | workload | feed off | feed on | ratio | goal | load |",
      "|---|---|---:|---:|---:|---|---:|",
    ]
    for figure in figures {
      let ratio = ratio(figure)
      lines.append(
        "| \(figure.engine) | \(figure.workload) | \(time(figure.off)) | \(time(figure.on)) | "
          + String(format: "%.2fx", ratio) + " | " + String(format: "≤ %.2fx: ", figure.goal)
          + (ratio <= figure.goal ? "met" : "**not met**") + " | \(loadText(figure.load)) |")
    }
    lines += [
      "", "| backend | row changes read | time | changes/s | goal | load |", "|---|---:|---:|---:|---|---:|",
    ]
    for read in reads {
      let perSecond = Double(read.changes) / Measure.seconds(read.time)
      let goal = readGoal(read.engine)
      lines.append(
        "| \(read.engine) | \(read.changes.formatted()) | \(time(read.time)) | \(rate(read)) | "
          + "≥ \(Int(goal).formatted()): \(perSecond >= goal ? "met" : "**not met**") | \(loadText(read.load)) |"
      )
    }
    if !wakes.isEmpty {
      lines += [
        "", "| backend | another process's commit reaches a follower | p50 | p99 | goal | load |",
        "|---|---:|---:|---:|---|---:|",
      ]
      for wake in wakes {
        let (p50, p99) = (wake.percentile(0.5), wake.percentile(0.99))
        lines.append(
          "| \(wake.engine) | \(wake.latencies.count) batches | "
            + String(format: "%.2f ms | %.2f ms", p50, p99)
            + " | p50 ≤ 5 ms, p99 ≤ 50 ms: \(p50 <= 5 && p99 <= 50 ? "met" : "**not met**") | \(loadText(wake.load)) |"
        )
      }
    }
    lines.append("")
    return lines
  }
}
