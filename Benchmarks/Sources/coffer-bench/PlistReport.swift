import Foundation

/// The property-list part of Docs/Performance.md.
enum PlistReport {
  static let baseline = [
    "bulk insert": "PropertyListEncoder rewrite",
    "open": "PropertyListDecoder",
    "single-row durable commit": "PropertyListEncoder rewrite",
  ]

  static func markdown(_ results: [PlistBenchmark.Result], rows: Int) -> [String] {
    var lines = [
      "## Property-list backend (\(rows.formatted()) chat messages)",
      "",
      "Coffer's `plist:` backend against the naive design it replaces: the whole store as one `Codable`",
      "value, re-encoded by `PropertyListEncoder` (binary) on every commit and decoded by",
      "`PropertyListDecoder` on open, written with the same durability (temporary file, fsync, rename,",
      "fsync of the directory). A ratio below 1 means Coffer is faster.",
      "",
      "| operation | system | median | ratio to baseline |",
      "|---|---|---:|---:|",
    ]
    let order = ["bulk insert", "open", "single-row durable commit"]
    let grouped = results.enumerated().sorted { lhs, rhs in
      let left = order.firstIndex(of: lhs.element.operation) ?? order.count
      let right = order.firstIndex(of: rhs.element.operation) ?? order.count
      return (left, lhs.offset) < (right, rhs.offset)
    }.map(\.element)
    for result in grouped {
      let base = results.first { $0.operation == result.operation && $0.system == baseline[result.operation] }
      let ratio =
        base.map { String(format: "%.3fx", Measure.seconds(result.median) / Measure.seconds($0.median)) }
        ?? "—"
      lines.append(
        "| \(result.operation) | \(result.system) | \(Measure.milliseconds(result.median)) | \(ratio) |")
    }
    lines.append("")
    return lines
  }

  static func csv(_ results: [PlistBenchmark.Result], rows: Int) -> [String] {
    results.map { "plist,\($0.operation),\($0.system),\(rows),\(Measure.seconds($0.median)),seconds" }
  }
}
