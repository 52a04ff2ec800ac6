import Foundation

/// The cross-system part of Docs/Performance.md: goals, ratios and medians, all computed from
/// one run's results.
enum SuiteReport {
  /// A Coffer backend measured against another system.
  struct Pair {
    var system: String
    var baseline: String
    var title: String
  }

  static let pairs = [
    Pair(system: "Coffer sqlite", baseline: "raw C libsqlite3", title: "Coffer sqlite ÷ raw C"),
    Pair(system: "Coffer sqlite", baseline: "GRDB records", title: "Coffer sqlite ÷ GRDB"),
    Pair(system: "GRDB records", baseline: "raw C libsqlite3", title: "GRDB ÷ raw C"),
    Pair(system: "Coffer lmdb", baseline: "raw C liblmdb", title: "Coffer lmdb ÷ raw C"),
    Pair(system: "Coffer lmdb", baseline: "Coffer sqlite", title: "Coffer lmdb ÷ Coffer sqlite"),
    Pair(system: "Coffer memory", baseline: "Dictionary", title: "Coffer memory ÷ Dictionary"),
    Pair(system: "Coffer postgres", baseline: "raw C libpq", title: "Coffer postgres ÷ raw C"),
    Pair(system: "Coffer postgres", baseline: "Fluent", title: "Coffer postgres ÷ Fluent"),
    Pair(system: "Fluent", baseline: "raw C libpq", title: "Fluent ÷ raw C"),
    Pair(system: "Coffer memory", baseline: "Coffer lmdb", title: "Coffer memory ÷ Coffer lmdb"),
    Pair(system: "Coffer plist", baseline: "Coffer memory", title: "Coffer plist ÷ Coffer memory"),
  ]

  /// Each Coffer backend with the codec derived from `Codable` against the same backend with the
  /// code `@Storable` generates: what the macro saves.
  static let codecPairs = ["sqlite", "lmdb", "memory", "plist", "postgres"].map { backend in
    Pair(system: "Coffer \(backend) (Codable)", baseline: "Coffer \(backend)", title: "Coffer \(backend)")
  }

  /// A goal an issue set: a comparison's ratio at each of `sizes` stays at or below `limit`, or
  /// strictly below it when `strict`. For a throughput the ratio is of the time per call, so a
  /// limit of 1.25 asks for at least 0.8x the baseline's throughput.
  struct Goal {
    var pair: Int
    var operation: Operation
    var limit: Double
    var strict = false
    var sizes = [100_000, 1_000_000]

    /// The goal as the report states it.
    var text: String {
      if operation.isThroughput { return "\(strict ? ">" : "≥") \(format(1 / limit)) throughput" }
      if strict { return "< \(format(limit))" }
      return limit < 1 ? "≤ \(format(limit)) (\(format(1 / limit)) as fast)" : "≤ \(format(limit))"
    }

    func isMet(by ratio: Double) -> Bool { strict ? ratio < limit : ratio <= limit }
  }

  private static let timedOperations = Operation.allCases.filter(\.isTime)
  /// The operations Coffer postgres must beat Fluent at by 3x (reads and bulk inserts).
  private static let threeTimes: Set<Operation> = [
    .bulkInsert, .pointGet, .concurrentGets, .threadPage, .fullScan,
  ]
  /// The operations the memory backend must be the fastest Coffer backend at.
  private static let readsAndUpdates: [Operation] = [
    .pointGet, .concurrentGets, .threadPage, .fullScan, .update,
  ]

  /// The goals the issues set, at 100,000 and 1,000,000 rows unless a goal names one size.
  static let goals: [Goal] = sqliteGoals + lmdbGoals + memoryGoals + postgresGoals

  /// SQLite: within 1.5x of raw C on every operation, tighter where an issue says so, and faster
  /// than GRDB on every operation.
  private static let sqliteGoals: [Goal] =
    [
      Goal(pair: 0, operation: .bulkInsert, limit: 1.25, sizes: [100_000]),
      Goal(pair: 0, operation: .bulkInsert, limit: 1.15, sizes: [1_000_000]),
      Goal(pair: 0, operation: .pointGet, limit: 1.5), Goal(pair: 0, operation: .threadPage, limit: 1.5),
      Goal(pair: 0, operation: .fullScan, limit: 1.2, sizes: [100_000]),
      Goal(pair: 0, operation: .fullScan, limit: 1.3, sizes: [1_000_000]),
      Goal(pair: 0, operation: .update, limit: 1.5), Goal(pair: 0, operation: .commit, limit: 1.2),
      Goal(pair: 0, operation: .peakMemory, limit: 1.3, sizes: [1_000_000]),
    ]
    + timedOperations.filter { $0 != .concurrentGets }.map {
      Goal(pair: 1, operation: $0, limit: 1, strict: true)
    }

  /// LMDB: within 1.5x of raw C (thread pages 1.25x), and faster than SQLite at reading.
  private static let lmdbGoals: [Goal] = [
    Goal(pair: 3, operation: .bulkInsert, limit: 1.5), Goal(pair: 3, operation: .pointGet, limit: 1.5),
    Goal(pair: 3, operation: .threadPage, limit: 1.25), Goal(pair: 3, operation: .fullScan, limit: 1.5),
    Goal(pair: 3, operation: .update, limit: 1.5), Goal(pair: 3, operation: .commit, limit: 1.5),
    Goal(pair: 4, operation: .pointGet, limit: 1, strict: true),
    Goal(pair: 4, operation: .threadPage, limit: 1, strict: true),
    Goal(pair: 4, operation: .fullScan, limit: 1, strict: true),
  ]

  /// Memory: near a plain Dictionary, faster than LMDB (the fastest other backend) at every read
  /// and update; the property list's peak memory near the memory backend's.
  private static let memoryGoals: [Goal] =
    [
      Goal(pair: 5, operation: .pointGet, limit: 2), Goal(pair: 5, operation: .fullScan, limit: 2.5),
      Goal(pair: 5, operation: .bulkInsert, limit: 3), Goal(pair: 5, operation: .update, limit: 3),
      Goal(pair: 5, operation: .peakMemory, limit: 1.5, sizes: [1_000_000]),
    ]
    + readsAndUpdates.map { Goal(pair: 9, operation: $0, limit: 1, strict: true) }
    + [Goal(pair: 10, operation: .peakMemory, limit: 1.5, sizes: [1_000_000])]

  /// PostgreSQL: against libpq with COPY and prepared statements, and against Fluent, at 100,000 rows.
  private static let postgresGoals: [Goal] =
    [
      Goal(pair: 6, operation: .pointGet, limit: 1.3, sizes: [100_000]),
      Goal(pair: 6, operation: .threadPage, limit: 1.3, sizes: [100_000]),
      Goal(pair: 6, operation: .fullScan, limit: 1.5, sizes: [100_000]),
      Goal(pair: 6, operation: .update, limit: 1.5, sizes: [100_000]),
      Goal(pair: 6, operation: .commit, limit: 1.2, sizes: [100_000]),
      Goal(pair: 6, operation: .bulkInsert, limit: 1.5, sizes: [100_000]),
      Goal(pair: 6, operation: .concurrentGets, limit: 1.25, sizes: [100_000]),
    ]
    + timedOperations.map { operation in
      threeTimes.contains(operation)
        ? Goal(pair: 7, operation: operation, limit: 1.0 / 3, sizes: [100_000])
        : Goal(pair: 7, operation: operation, limit: 1, strict: true, sizes: [100_000])
    }

  static func ratio(_ results: [Result], _ pair: Pair, _ operation: Operation, rows: Int) -> Double? {
    func value(_ system: String) -> Double? {
      results.first { $0.system == system && $0.operation == operation && $0.rows == rows }?.value
    }
    guard let mine = value(pair.system), let base = value(pair.baseline), base > 0 else { return nil }
    return mine / base
  }

  static func markdown(_ results: [Result], suite: Suite) -> [String] {
    var lines: [String] = []
    let sizes = suite.sizes
    lines += ["## Goals", ""]
    let goalRows = goals.flatMap { goal in goal.sizes.filter(sizes.contains).map { (goal, $0) } }
    if goalRows.isEmpty {
      lines.append("This run included neither 100,000 nor 1,000,000 rows, the sizes the goals are set at.")
    } else {
      lines += [
        "The goals the issues set, at the sizes they name, with ratios taken within this run. A ratio below 1",
        "means Coffer is faster (or smaller); for concurrent point gets the ratio shown is of throughputs, so",
        "above 1 means Coffer serves more gets per second.", "",
        "| comparison | operation | rows | ratio | goal | met? |", "|---|---|---:|---:|---:|---|",
      ]
      var met = 0
      var measured = 0
      for (goal, rows) in goalRows {
        let pair = pairs[goal.pair]
        let size = rows.formatted()
        guard let ratio = ratio(results, pair, goal.operation, rows: rows) else {
          lines.append(
            "| \(pair.title) | \(goal.operation.rawValue) | \(size) | not measured | \(goal.text) | — |")
          continue
        }
        measured += 1
        if goal.isMet(by: ratio) { met += 1 }
        let verdict = goal.isMet(by: ratio) ? "yes" : "**no**"
        let shown = goal.operation.isThroughput ? format(1 / ratio) + " throughput" : format(ratio)
        lines.append(
          "| \(pair.title) | \(goal.operation.rawValue) | \(size) | \(shown) | \(goal.text) | \(verdict) |")
      }
      lines += ["", "\(met) of the \(measured) goals this run measured are met."]
    }
    lines += ["", "![Ratios to the baseline systems](performance-ratios.svg)", ""]

    for rows in sizes {
      let systems = orderedSystems(results, rows: rows)
      lines += [
        "## \(rows.formatted()) chat messages", "",
        "Ratios within this run (below 1: the first system is faster; for concurrent point gets, the ratio",
        "of times per get, so below 1 too):", "",
      ]
      let shownPairs = pairs.filter { pair in systems.contains(pair.system) && systems.contains(pair.baseline)
      }
      lines.append("| operation | " + shownPairs.map(\.title).joined(separator: " | ") + " |")
      lines.append("|---|" + String(repeating: "---:|", count: shownPairs.count))
      for operation in Operation.allCases {
        let cells = shownPairs.map { ratio(results, $0, operation, rows: rows).map(format) ?? "—" }
        lines.append("| \(operation.rawValue) | " + cells.joined(separator: " | ") + " |")
      }
      let codecPairs = codecPairs.filter { systems.contains($0.system) && systems.contains($0.baseline) }
      if !codecPairs.isEmpty {
        lines += [
          "",
          "What `@Storable` saves: each backend with the codec derived from `Codable`, over the same backend",
          "with the code `@Storable` generates (above 1: the macro is faster):", "",
        ]
        lines.append("| operation | " + codecPairs.map(\.title).joined(separator: " | ") + " |")
        lines.append("|---|" + String(repeating: "---:|", count: codecPairs.count))
        for operation in Operation.allCases where operation.isTime {
          let cells = codecPairs.map { ratio(results, $0, operation, rows: rows).map(format) ?? "—" }
          lines.append("| \(operation.rawValue) | " + cells.joined(separator: " | ") + " |")
        }
      }
      lines += ["", "Medians:", ""]
      lines.append("| operation | " + systems.joined(separator: " | ") + " |")
      lines.append("|---|" + String(repeating: "---:|", count: systems.count))
      for operation in Operation.allCases {
        let cells = systems.map { system in
          results.first { $0.system == system && $0.operation == operation && $0.rows == rows }
            .map { show($0.value, operation) } ?? "—"
        }
        let detail = operation.detail(rows: rows, gets: suite.gets, pages: suite.pages)
        lines.append("| \(operation.rawValue) (\(detail)) | " + cells.joined(separator: " | ") + " |")
      }
      lines.append("")
    }
    return lines
  }

  static func csv(_ results: [Result]) -> [String] {
    results.map { result in
      if result.operation.isThroughput {
        let perSecond = result.value > 0 ? 1 / result.value : 0
        return "suite,\(result.operation.rawValue),\(result.system),\(result.rows),\(perSecond),per second"
      }
      let unit = result.operation.isTime ? "seconds" : "bytes"
      return "suite,\(result.operation.rawValue),\(result.system),\(result.rows),\(result.value),\(unit)"
    }
  }

  private static func orderedSystems(_ results: [Result], rows: Int) -> [String] {
    var seen: [String] = []
    for result in results where result.rows == rows && !seen.contains(result.system) {
      seen.append(result.system)
    }
    return seen
  }

  static func format(_ ratio: Double) -> String { String(format: "%.2fx", ratio) }

  /// Seconds in the unit that keeps three significant digits readable: s, ms or µs.
  static func duration(_ seconds: Double) -> String {
    if seconds >= 1 { return String(format: "%.2f s", seconds) }
    if seconds >= 0.001 { return String(format: "%.2f ms", seconds * 1000) }
    return String(format: "%.2f µs", seconds * 1_000_000)
  }

  /// A time per call over several tasks as calls per second.
  static func throughput(_ seconds: Double) -> String {
    seconds > 0 ? "\(Int((1 / seconds).rounded()).formatted()) /s" : "—"
  }

  private static func show(_ value: Double, _ operation: Operation) -> String {
    if operation.isThroughput { return throughput(value) }
    if operation.isTime { return duration(value) }
    return String(format: "%.1f MiB", value / 1_048_576)
  }
}
