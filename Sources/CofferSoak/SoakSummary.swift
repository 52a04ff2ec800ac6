import Foundation

/// One window of a soak, over every process: what they counted, and each one's resources in
/// it (the lowest of its samples).
package struct SoakWindow: Sendable, Equatable {
  /// The window's number, from 1 (the warm-up).
  package var number: Int
  /// When it started and ended, in seconds from the soak's start.
  package var start: Double
  /// When it ended, in seconds from the soak's start.
  package var end: Double
  /// What every process that reported counted in it.
  package var counts: SoakCounts
  /// Each process's resources in the window (the lowest of its samples, see
  /// ``SoakResources/lowest(until:)``): this process first, then the extra ones in order; `nil`
  /// for a process that did not report the window.
  package var resources: [SoakResources?]

  /// A window with these figures.
  package init(number: Int, start: Double, end: Double, counts: SoakCounts, resources: [SoakResources?]) {
    self.number = number
    self.start = start
    self.end = end
    self.counts = counts
    self.resources = resources
  }

  /// How long the window lasted, in seconds.
  package var seconds: Double { max(end - start, 0.001) }

  /// The numbers of the extra processes that did not report this window.
  package var missing: [Int] { resources.indices.dropFirst().filter { resources[$0] == nil } }

  /// The window as the soak prints it while it runs.
  package var rendered: String {
    func mebibytes(_ bytes: Int?) -> String? { bytes.map { String(format: "%.1f", Double($0) / 1_048_576) } }
    func rate(_ count: Int) -> String { String(format: "%.1f", Double(count) / seconds) }
    func each(_ value: (SoakResources) -> String?) -> String {
      resources.map { $0.flatMap(value) ?? "?" }.joined(separator: "/")
    }
    var line =
      "window \(number) \(Int(start.rounded()))-\(Int(end.rounded())) s: commits/s \(rate(counts.commits)), "
      + "reads/s \(rate(counts.reads)), retries/s \(rate(counts.retries)), exhausted \(counts.exhausted), "
      + "violations \(counts.violations), errors \(counts.errorCount), "
      + "rss MiB \(each { mebibytes($0.residentBytes) }) (anonymous \(each { mebibytes($0.anonymousBytes) })), "
      + "fds \(each { $0.openFiles.map(String.init) })"
    if !missing.isEmpty {
      line += " (no report yet from extra process \(missing.map(String.init).joined(separator: ", ")))"
    }
    return line
  }
}

/// The end of a soak: totals, throughput trend, resource growth after the warm-up, and
/// whether it passed.
package struct SoakSummary: Sendable {
  /// Every window, in order; the first ``warmUp`` are the warm-up.
  package var windows: [SoakWindow]
  /// How many windows at the start are the warm-up: growth is measured from the end of the last
  /// of them, and the throughput trend over the windows after them.
  package var warmUp: Int
  /// Everything every process counted, the windows and what finished after the last one.
  package var totals: SoakCounts
  /// How much (in percent) resident memory or open files may grow after the warm-up.
  package var growthLimit: Double
  /// Extra processes that failed (ended badly, or printed what the parent could not read).
  package var processFailures: [String]

  /// The summary of `windows`, the first `warmUp` of them the warm-up, judged against
  /// `growthLimit`.
  package init(
    windows: [SoakWindow], warmUp: Int = 1, totals: SoakCounts, growthLimit: Double, processFailures: [String]
  ) {
    self.windows = windows
    self.warmUp = max(warmUp, 1)
    self.totals = totals
    self.growthLimit = growthLimit
    self.processFailures = processFailures
  }

  /// How one resource grew after the warm-up in the process where it grew most.
  package struct Growth: Sendable, Equatable {
    /// The process (0 for this one, 1… for the extra ones).
    package var process: Int
    /// The highest level in the warm-up windows.
    package var first: Int
    /// At the end of the last window.
    package var last: Int

    /// The growth of one process's figure from `first` to `last`.
    package init(process: Int, first: Int, last: Int) {
      self.process = process
      self.first = first
      self.last = last
    }
    /// The change from `first` to `last`, in percent.
    package var percent: Double { first > 0 ? Double(last - first) / Double(first) * 100 : 0 }
  }

  /// Whether any window follows the warm-up.
  package var hasSteadyWindows: Bool { windows.count > warmUp }

  /// The greatest growth of a resource over the processes that reported it: from the highest
  /// level it reached in the warm-up windows (each window's figure is the lowest of its samples)
  /// to its level in the last window; `nil` when no window follows the warm-up.
  ///
  /// The highest, not the last, warm-up level: open files go up and down by one as a pool opens
  /// and closes a connection, and memory by a page or two, from window to window. A leak rises
  /// above everything the warm-up saw; a figure that only moves within that range is steady.
  package func growth(of resource: (SoakResources) -> Int?) -> Growth? {
    guard hasSteadyWindows, let last = windows.last else { return nil }
    let warm = windows.prefix(warmUp)
    var largest: Growth?
    for process in last.resources.indices {
      let levels = warm.compactMap {
        process < $0.resources.count ? $0.resources[process].flatMap(resource) : nil
      }
      guard let before = levels.max(), let after = last.resources[process].flatMap(resource) else { continue }
      let growth = Growth(process: process, first: before, last: after)
      if largest.map({ growth.percent > $0.percent }) ?? true { largest = growth }
    }
    return largest
  }

  /// Rates of a count per window after the warm-up (every window when none follows it).
  package func rates(of count: (SoakCounts) -> Int) -> [Double] {
    let steady = hasSteadyWindows ? Array(windows.dropFirst(warmUp)) : windows
    return steady.map { Double(count($0.counts)) / $0.seconds }
  }

  /// Why the soak failed; empty when it passed.
  package var failures: [String] {
    var reasons: [String] = []
    if totals.violations > 0 { reasons.append("\(totals.violations) invariant violations") }
    if totals.errorCount > 0 { reasons.append("\(totals.errorCount) errors") }
    if totals.exhausted > 0 {
      reasons.append("\(totals.exhausted) transfers that conflicted after every retry")
    }
    if totals.commits == 0 { reasons.append("no transfer committed") }
    if totals.reads == 0 { reasons.append("no read completed") }
    reasons += processFailures
    for (name, growth) in [
      ("anonymous resident memory", growth { $0.anonymousBytes }), ("open files", growth { $0.openFiles }),
    ] {
      if let growth, growth.percent > growthLimit {
        reasons.append(
          "\(name) grew \(String(format: "%.1f", growth.percent))% after the warm-up "
            + "(process \(growth.process)), more than \(String(format: "%g", growthLimit))%")
      }
    }
    return reasons
  }

  /// The summary as the soak prints it, one indented line per figure after the first.
  package func rendered(store: String) -> [String] {
    let errors = totals.errors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(
      separator: ", ")
    var lines = [
      "summary \(store):",
      "  totals: commits \(totals.commits) reads \(totals.reads) retries \(totals.retries) "
        + "exhausted \(totals.exhausted) violations \(totals.violations) errors \(totals.errorCount)"
        + (errors.isEmpty ? "" : " (\(errors))"),
    ]
    let steady =
      !hasSteadyWindows
      ? "(no window after the warm-up: none left out)"
      : warmUp == 1 ? "after the warm-up window" : "after the \(warmUp) warm-up windows"
    for (name, rates) in [("commits/s", rates { $0.commits }), ("reads/s", rates { $0.reads })] {
      guard let last = rates.last, let lowest = rates.min() else { continue }
      let mean = rates.reduce(0, +) / Double(rates.count)
      lines.append(
        "  \(name) \(steady): mean \(String(format: "%.1f", mean)), min \(String(format: "%.1f", lowest)), "
          + "last \(String(format: "%.1f", last)) (last/mean \(String(format: "%.2f", mean > 0 ? last / mean : 0)))"
      )
    }
    let judged = "limit \(String(format: "%g", growthLimit))%"
    for (name, growth, inMebibytes, limit) in [
      ("anonymous rss", growth { $0.anonymousBytes }, true, judged),
      ("fds", growth { $0.openFiles }, false, judged),
      ("rss in all", growth { $0.residentBytes }, true, "not judged: it counts pages of mapped store files"),
    ] {
      guard let growth else {
        lines.append("  \(name) growth: not measured (needs a window after the warm-up, and /proc)")
        continue
      }
      func show(_ value: Int) -> String {
        inMebibytes ? String(format: "%.1f MiB", Double(value) / 1_048_576) : String(value)
      }
      lines.append(
        "  \(name) growth after the warm-up: \(String(format: "%+.1f", growth.percent))% at most "
          + "(process \(growth.process): \(show(growth.first)) -> \(show(growth.last))), \(limit)")
    }
    let failures = failures
    lines.append("  result: " + (failures.isEmpty ? "pass" : "FAIL: " + failures.joined(separator: "; ")))
    return lines
  }
}
