import CoreMetrics
import Foundation
import InMemoryTracing
import Prometheus
import Tracing

/// `coffer-bench --telemetry-overhead [--systems KEY,…] [--rows N] [--gets N] [--rounds N]`: what
/// a point get costs when the store counts and traces it, beside the same store with nothing
/// bootstrapped.
///
/// Each system is filled twice: one store opened with nothing bound (no telemetry: what every
/// app that bootstraps nothing runs), one opened inside `withMetricsFactory` and `withTracer`
/// with a real metrics backend (swift-prometheus, whose timers are histograms) and an in-memory
/// tracer (InMemoryTracing, whose finished spans are dropped after each round, outside the
/// timing, as an exporter would take them). Rounds of `--gets` point gets alternate between the
/// two, so the machine's load falls on both alike; the medians and their ratio are printed with
/// the load of the run.
///
/// `coffer-bench --telemetry …` (before any other argument) instead bootstraps the same two
/// backends for the whole process and runs what follows: `--telemetry --profile coffer-memory
/// get 100000 200` times the profile loop with telemetry on.
enum TelemetryBenchmark {
  static let flag = "--telemetry-overhead"
  static let bootstrapFlag = "--telemetry"

  /// Bootstraps the recording backends for the whole process.
  static func bootstrap() {
    MetricsSystem.bootstrap(PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()))
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

  static func run(_ arguments: [String]) async throws {
    var systems = ["coffer-memory", "coffer-sqlite", "coffer-lmdb"]
    var rows = 100_000
    var gets = 10_000
    var rounds = 11
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
      default: throw UsageError(message: "\(flag): unknown argument \(argument)")
      }
    }
    let messages = Workload.messages(rows)
    let load = MachineLoad()
    say(
      "Point gets with and without telemetry: \(rows) rows, \(rounds) rounds of \(gets) gets each, alternating."
    )
    say("| system | no telemetry (µs/get) | metrics + tracer (µs/get) | ratio |")
    say("|---|---:|---:|---:|")
    for key in systems {
      guard let plain = SystemCatalog.make(key), let recorded = SystemCatalog.make(key) else {
        throw UsageError(message: "\(flag): unknown system \(key)")
      }
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
      var plainTimes: [Duration] = []
      var recordedTimes: [Duration] = []
      var checksum: Int64 = 0
      for round in 0..<(rounds * 2) {
        var random = SplitMix64(state: UInt64(round / 2 + 7))
        let system = round % 2 == 0 ? plain : recorded
        let start = ContinuousClock.now
        for _ in 0..<gets { checksum &+= try await system.get(messages[random.below(rows)].id)?.id ?? 0 }
        let elapsed = ContinuousClock.now - start
        if round % 2 == 0 { plainTimes.append(elapsed) } else { recordedTimes.append(elapsed) }
        tracer.clearFinishedSpans()
      }
      try await plain.close()
      try await recorded.close()
      let off = Measure.seconds(Measure.median(plainTimes)) / Double(gets) * 1e6
      let on = Measure.seconds(Measure.median(recordedTimes)) / Double(gets) * 1e6
      let spread = { (times: [Duration]) -> String in
        let sorted = times.map { Measure.seconds($0) / Double(gets) * 1e6 }.sorted()
        return String(format: "%.3f–%.3f", sorted.first ?? 0, sorted.last ?? 0)
      }
      say(
        String(
          format: "| %@ | %.3f (%@) | %.3f (%@) | %.2fx |", key, off, spread(plainTimes), on,
          spread(recordedTimes), on / off) + (checksum == 0 ? " (no rows read)" : ""))
    }
    say(load.finish().sentence)
  }
}
