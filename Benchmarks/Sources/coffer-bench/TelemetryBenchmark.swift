import CoreMetrics
import Foundation
import InMemoryTracing
import Prometheus
import Tracing

/// `coffer-bench --telemetry-overhead [--systems KEY,…] [--rows N] [--gets N] [--rounds N]
/// [--postgres-url URL] [--output DIR] [--no-write]`: what a point get costs when the store counts and traces it,
/// beside the same store with nothing bootstrapped, and beside what the metrics backend and the
/// tracer cost on their own for the same get.
///
/// Each system is filled twice: one store opened with nothing bound (no telemetry: what every
/// app that bootstraps nothing runs), one opened inside `withMetricsFactory` and `withTracer`
/// with a real metrics backend (swift-prometheus, whose timers are histograms) and an in-memory
/// tracer (InMemoryTracing, whose finished spans are dropped after each round, outside the
/// timing, as an exporter would take them). A third kind of round makes, without any store,
/// exactly what Coffer hands those two for one get — the call's span with its attributes, bound
/// as the task's context while the (empty) call runs, the statement's child span on SQL
/// backends, and one timer sample — which is the floor no instrumented store can go below. The
/// three kinds of rounds take turns, so the machine's load falls on all alike; medians, their
/// ratios and the load of the run are printed and written to DIR/Telemetry.md, the table also into
/// DIR/Performance.md (a part of its own there, which the suite run keeps).
///
/// `coffer-bench --telemetry …` (before any other argument) instead bootstraps the same two
/// backends for the whole process and runs what follows: `--telemetry --profile coffer-memory
/// get 100000 200` times the profile loop with telemetry on.
enum TelemetryBenchmark {
  static let flag = "--telemetry-overhead"
  static let bootstrapFlag = "--telemetry"
  /// The goal: a recorded get at most this many times an unrecorded one.
  static let goal = 1.10

  /// Bootstraps the recording backends for the whole process.
  static func bootstrap() {
    // `COFFER_BENCH_TELEMETRY=metrics` or `=tracer` bootstraps one of the two, to tell their costs
    // apart; both by default.
    let only = ProcessInfo.processInfo.environment["COFFER_BENCH_TELEMETRY"]
    if only != "tracer" {
      MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
    }
    guard only != "metrics" else { return }
    let tracer = InMemoryTracer()
    InstrumentationSystem.bootstrap(tracer)
    // Drops finished spans now and then, as an exporter would take them.
    Task.detached(priority: .background) {
      while true {
        try? await Task.sleep(for: .milliseconds(200))
        tracer.clearFinishedSpans()
      }
    }
  }

  /// One system's medians, in microseconds a get.
  struct Figure {
    var system: String
    var plain: Double
    var recorded: Double
    var instruments: Double
    var spread: (plain: String, recorded: String, instruments: String)
    var load: Double?

    var ratio: Double { recorded / plain }
    var floorRatio: Double { (plain + instruments) / plain }
    var own: Double { recorded - plain - instruments }
  }

  static func run(_ arguments: [String]) async throws {
    var systems = ["coffer-memory", "coffer-sqlite", "coffer-lmdb"]
    var rows = 100_000
    var gets = 10_000
    var rounds = 11
    var output: String?
    var write = true
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      func number() throws -> Int {
        guard let text = iterator.next(), let value = Int(text), value > 0 else {
          throw UsageError(message: "\(argument) needs a positive number")
        }
        return value
      }
      switch argument {
      case "--systems":
        systems = (iterator.next() ?? "").split(separator: ",").map(String.init)
      case "--rows": rows = try number()
      case "--gets": gets = try number()
      case "--rounds": rounds = try number()
      case "--postgres-url":
        guard let url = iterator.next() else { throw UsageError(message: "--postgres-url needs a URL") }
        try PostgresServer.use(url)
        if !systems.contains("coffer-postgres") { systems.append("coffer-postgres") }
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "\(flag): unknown argument \(argument)")
      }
    }
    let command = benchCommand(flag, arguments)
    let messages = Workload.messages(rows)
    let load = MachineLoad()
    say(
      "Point gets with and without telemetry: \(rows) rows, \(rounds) rounds of \(gets) gets each, alternating."
    )
    var figures: [Figure] = []
    for key in systems {
      let figure = try await measure(key, messages: messages, gets: gets, rounds: rounds)
      say(
        String(
          format: "%@: %.3f µs a get without telemetry, %.3f with it (%.2fx); the instruments alone %.3f",
          key, figure.plain, figure.recorded, figure.ratio, figure.instruments))
      figures.append(figure)
    }
    let text = report(
      figures, rows: rows, gets: gets, rounds: rounds, command: command, load: load.finish()
    ).joined(separator: "\n")
    print(text)
    if write {
      try writeReport(text, named: "Telemetry.md", to: output)
      // The table, beside the other figures.
      let table = text.split(separator: "\n", omittingEmptySubsequences: false).drop { !$0.hasPrefix("|") }
      try PerformanceSections.write(
        "## What telemetry costs a point get\n\nFrom Telemetry.md, which says how it was measured:\n\n"
          + table.joined(separator: "\n"), as: .telemetry, to: reportDirectory(output))
    }
  }

  private static func measure(_ key: String, messages: [ChatMessage], gets: Int, rounds: Int) async throws
    -> Figure
  {
    guard let (plain, recorded) = pair(key) else {
      throw UsageError(message: "\(flag): unknown system \(key)")
    }
    let rows = messages.count
    let folder = try ScratchFolder("telemetry")
    defer { folder.remove() }
    let metrics = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())
    let tracer = InMemoryTracer()
    try FileManager.default.createDirectory(atPath: folder.file("plain"), withIntermediateDirectories: true)
    try FileManager.default.createDirectory(
      atPath: folder.file("recorded"), withIntermediateDirectories: true)
    try await plain.create(in: folder.file("plain"))
    try await plain.bulkInsert(messages)
    try await withMetricsFactory(metrics) {
      try await withTracer(tracer) { try await recorded.create(in: folder.file("recorded")) }
    }
    try await recorded.bulkInsert(messages)
    tracer.clearFinishedSpans()
    let alone = Instruments(
      system: key.replacingOccurrences(of: "coffer-", with: ""), metrics: metrics, tracer: tracer,
      statement: key == "coffer-sqlite" || key == "coffer-postgres")
    var times: [[Duration]] = [[], [], []]
    var checksum: Int64 = 0
    for round in 0..<(rounds * 3) {
      var random = SplitMix64(state: UInt64(round / 3 + 7))
      let start = ContinuousClock.now
      switch round % 3 {
      case 0:
        for _ in 0..<gets { checksum &+= try await plain.get(messages[random.below(rows)].id)?.id ?? 0 }
      case 1:
        for _ in 0..<gets { checksum &+= try await recorded.get(messages[random.below(rows)].id)?.id ?? 0 }
      default:
        for _ in 0..<gets { checksum &+= await alone.get(messages[random.below(rows)].id) }
      }
      times[round % 3].append(ContinuousClock.now - start)
      tracer.clearFinishedSpans()
    }
    try await plain.close()
    try await recorded.close()
    if checksum == 0 { throw UsageError(message: "\(flag): \(key) read no rows") }
    let micros = { (times: [Duration]) in Measure.seconds(Measure.median(times)) / Double(gets) * 1e6 }
    let spread = { (times: [Duration]) -> String in
      let sorted = times.map { Measure.seconds($0) / Double(gets) * 1e6 }.sorted()
      return String(format: "%.3f–%.3f", sorted.first ?? 0, sorted.last ?? 0)
    }
    return Figure(
      system: key, plain: micros(times[0]), recorded: micros(times[1]), instruments: micros(times[2]),
      spread: (spread(times[0]), spread(times[1]), spread(times[2])), load: loadAverage())
  }

  /// Two stores of a system: on PostgreSQL each in a database of its own, as the catalog gives
  /// each system one.
  private static func pair(_ key: String) -> (any BenchSystem, any BenchSystem)? {
    if key == "coffer-postgres" {
      return (
        CofferSystem(name: "Coffer postgres", database: "coffer_bench_telemetry_plain"),
        CofferSystem(name: "Coffer postgres", database: "coffer_bench_telemetry_recorded")
      )
    }
    guard let plain = SystemCatalog.make(key), let recorded = SystemCatalog.make(key) else { return nil }
    return (plain, recorded)
  }

  /// What Coffer hands the metrics backend and the tracer for one point get, with no store
  /// behind it: the floor of a recorded get's cost above an unrecorded one.
  private struct Instruments {
    let tracer: any Tracer
    let timer: CoreMetrics.Timer
    let system: String
    let statement: Bool
    let store = "bench"

    init(system: String, metrics: any MetricsFactory, tracer: any Tracer, statement: Bool) {
      self.tracer = tracer
      self.system = system
      self.statement = statement
      timer = CoreMetrics.Timer(
        label: "db.client.operation.duration",
        dimensions: [
          ("db.system.name", system), ("coffer.store", "bench"), ("db.operation.name", "get"),
          ("db.collection.name", "ChatMessage"),
        ], preferredDisplayUnit: .seconds, factory: metrics)
    }

    func get(_ id: Int64, isolation: isolated (any Actor)? = #isolation) async -> Int64 {
      let started = ContinuousClock.now
      let span = tracer.startSpan(
        "get ChatMessage", context: InstrumentationContext.current ?? .topLevel, ofKind: .client)
      span.updateAttributes { attributes in
        attributes["db.system.name"] = system
        attributes["db.operation.name"] = "get"
        attributes["db.collection.name"] = "ChatMessage"
        attributes["coffer.store"] = store
      }
      let result = await InstrumentationContext.$current.withValue(
        span.context,
        operation: {
          _ = isolation
          if statement { statementSpan() }
          return id
        }, isolation: isolation)
      span.end()
      let elapsed = (ContinuousClock.now - started).components
      timer.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
      return result
    }

    /// A statement's span, as a SQL backend's statement tracer makes it.
    private func statementSpan() {
      guard let parent = InstrumentationContext.current else { return }
      let end = DefaultTracerClock.now
      let start = DefaultTracerClock.Timestamp(nanosecondsSinceEpoch: end.nanosecondsSinceEpoch - 1_000)
      let span = tracer.startSpan("SELECT ChatMessage", context: parent, ofKind: .client, at: start)
      span.updateAttributes { attributes in
        attributes["db.system.name"] = system
        attributes["db.operation.name"] = "SELECT"
        attributes["db.collection.name"] = "ChatMessage"
        attributes["db.query.text"] = #"SELECT "id", "threadID" FROM "ChatMessage" WHERE "id" = ?1"#
        attributes["coffer.store"] = store
      }
      span.end(at: end)
    }
  }

  static func report(
    _ figures: [Figure], rows: Int, gets: Int, rounds: Int, command: String, load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# What telemetry costs a point get",
      "",
      "Written by `\(command)`: "
        + "\(rounds) rounds of \(gets) point gets by random id in \(rows) chat messages, for each system three "
        + "kinds of round taking turns. \"No telemetry\": a store opened with nothing bootstrapped, what every "
        + "app that bootstraps nothing runs. \"Metrics + tracer\": the same store opened inside "
        + "`withMetricsFactory` (swift-prometheus, whose timers are histograms) and `withTracer` "
        + "(InMemoryTracing; its finished spans are dropped after each round, outside the timing, as an "
        + "exporter takes them). \"Instruments alone\": no store, only what Coffer hands those two for one get "
        + "— the call's span with its four attributes, bound as the task's context while the call runs, the "
        + "statement's child span with five on SQLite and PostgreSQL, one histogram sample — the floor under any "
        + "instrumented get. The floor ratio is (no telemetry + instruments alone) ÷ no telemetry; Coffer's own "
        + "share is what a recorded get costs beyond both. Medians a get, fastest and slowest round in "
        + "brackets. The benchmark calls the stores from the main actor, as an app's UI code does. "
        + "\(load.sentence) Machine: \(machineDescription()).",
      "",
      "| system | no telemetry | metrics + tracer | ratio | instruments alone | floor ratio | Coffer's own | goal ≤ \(String(format: "%.2f", goal))x | load |",
      "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    for figure in figures {
      let verdict: String
      if figure.ratio <= goal {
        verdict = "met"
      } else if figure.floorRatio > goal {
        verdict = "**not met**: the instruments alone exceed it"
      } else {
        verdict = "**not met**"
      }
      lines.append(
        String(
          format: "| %@ | %.3f µs (%@) | %.3f µs (%@) | %.2fx | %.3f µs (%@) | %.2fx | %.3f µs | %@ | %@ |",
          figure.system, figure.plain, figure.spread.plain, figure.recorded, figure.spread.recorded,
          figure.ratio,
          figure.instruments, figure.spread.instruments, figure.floorRatio, figure.own, verdict,
          figure.load.map { String(format: "%.2f", $0) } ?? "–"))
    }
    return lines + [""]
  }
}
