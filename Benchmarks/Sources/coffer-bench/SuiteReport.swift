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
  ]

  /// Each Coffer backend with the codec derived from `Codable` against the same backend with the
  /// code `@Storable` generates: what the macro saves.
  static let codecPairs = ["sqlite", "lmdb", "memory", "plist"].map { backend in
    Pair(system: "Coffer \(backend) (Codable)", baseline: "Coffer \(backend)", title: "Coffer \(backend)")
  }

  /// The goals the issues set, at 100,000 rows (peak memory at 1,000,000), as a ratio ceiling.
  static let goals: [(pair: Int, operation: Operation, limit: Double)] = [
    (0, .bulkInsert, 1.25), (0, .pointGet, 1.5), (0, .threadPage, 1.5), (0, .fullScan, 1.5),
    (0, .update, 1.5),
    (0, .commit, 1.2), (0, .peakMemory, 1.3),
    (3, .bulkInsert, 1.5), (3, .pointGet, 2), (3, .threadPage, 1.5), (3, .fullScan, 2),
    (4, .pointGet, 1), (4, .threadPage, 1), (4, .fullScan, 1),
  ]

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
    if sizes.contains(100_000) {
      lines += [
        "Ratios at 100,000 rows (peak memory at 1,000,000 rows), taken within this run. A ratio below 1 means",
        "Coffer is faster (or smaller).", "",
        "| comparison | operation | ratio | goal | met? |", "|---|---|---:|---:|---|",
      ]
      for goal in goals {
        let pair = pairs[goal.pair]
        let rows = goal.operation == .peakMemory ? 1_000_000 : 100_000
        guard let ratio = ratio(results, pair, goal.operation, rows: rows) else {
          lines.append("| \(pair.title) | \(goal.operation.rawValue) | not measured | ≤ \(goal.limit)x | — |")
          continue
        }
        let met = ratio <= goal.limit ? "yes" : "**no**"
        lines.append(
          "| \(pair.title) | \(goal.operation.rawValue) | \(format(ratio)) | "
            + (goal.pair == 4 ? "< 1x" : "≤ \(goal.limit)x") + " | \(met) |")
      }
    } else {
      lines.append("This run did not include 100,000 rows, the size the goals are set at.")
    }
    lines += ["", "![Ratios to the baseline systems](performance-ratios.svg)", ""]

    for rows in sizes {
      let systems = orderedSystems(results, rows: rows)
      lines += [
        "## \(rows.formatted()) chat messages", "",
        "Ratios within this run (below 1: the first system is faster):", "",
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

  private static func show(_ value: Double, _ operation: Operation) -> String {
    if operation.isTime { return duration(value) }
    return String(format: "%.1f MiB", value / 1_048_576)
  }
}
