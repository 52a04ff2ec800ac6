import CofferConformance

/// The results of the conformance suite on several stores, as the text `coffer conformance`
/// prints: a table of checks by store, the failure messages and skip reasons, and a summary
/// line `N passed, N failed, N skipped`.
struct ConformanceReport {
  let checks: [ConformanceCheck]
  let stores: [String]
  /// One array per store, in the order of `checks`.
  let results: [[ConformanceResult]]

  /// Rules longer than this are shortened in the table; `coffer conformance --list` has them whole.
  static let ruleWidth = 64

  var passed: Int { count { $0 == .passed } }
  var failed: Int { count { if case .failed = $0 { true } else { false } } }
  var skipped: Int { count { if case .skipped = $0 { true } else { false } } }

  private func count(_ matches: (ConformanceOutcome) -> Bool) -> Int {
    results.reduce(0) { sum, column in sum + column.count { matches($0.outcome) } }
  }

  func rendered() -> String {
    var rows: [[String]] = [["check", "rule"] + stores]
    for (index, check) in checks.enumerated() {
      rows.append([check.id, Self.shortened(check.rule)] + results.map { Self.mark($0[index].outcome) })
    }
    var text = table(rows)
    text += notes(title: "Failures") { outcome in
      if case .failed(let message) = outcome { message } else { nil }
    }
    text += notes(title: "Skipped") { outcome in
      if case .skipped(let reason) = outcome { reason } else { nil }
    }
    text += "\n\(passed) passed, \(failed) failed, \(skipped) skipped\n"
    return text
  }

  private static func mark(_ outcome: ConformanceOutcome) -> String {
    switch outcome {
    case .passed: "pass"
    case .failed: "FAIL"
    case .skipped: "skip"
    }
  }

  private static func shortened(_ rule: String) -> String {
    rule.count <= ruleWidth ? rule : String(rule.prefix(ruleWidth - 1)) + "…"
  }

  private func table(_ rows: [[String]]) -> String {
    let widths = rows[0].indices.map { column in rows.map { $0[column].count }.max() ?? 0 }
    return rows.map { row in
      row.enumerated().map { column, cell in
        column == row.count - 1 ? cell : cell + String(repeating: " ", count: widths[column] - cell.count)
      }.joined(separator: "  ")
    }.joined(separator: "\n") + "\n"
  }

  /// The messages of the outcomes `message` picks, as "check on store: message" lines.
  private func notes(title: String, _ message: (ConformanceOutcome) -> String?) -> String {
    var lines: [String] = []
    for (store, column) in zip(stores, results) {
      for result in column {
        if let text = message(result.outcome) { lines.append("  \(result.check.id) (\(store)): \(text)") }
      }
    }
    return lines.isEmpty ? "" : "\n\(title):\n" + lines.joined(separator: "\n") + "\n"
  }
}
