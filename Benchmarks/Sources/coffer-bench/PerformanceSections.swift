import Foundation

/// Docs/Performance.md holds the chat messages, which the suite run writes, and parts other
/// commands write between two marker lines of their own: the ticket workload (`--tickets`) and
/// what telemetry costs a point get (`--telemetry-overhead`). Each run replaces only its own part
/// and keeps the others as they were, so each part names the command and the run that printed it.
enum PerformanceSections {
  static let fileName = "Performance.md"

  /// A part of Performance.md that a command other than the suite run writes.
  enum Part: CaseIterable {
    case tickets
    case telemetry

    var begin: String {
      switch self {
      case .tickets: "<!-- Ticket workload: written by coffer-bench --tickets; the suite run keeps it. -->"
      case .telemetry:
        "<!-- Telemetry: written by coffer-bench --telemetry-overhead; the suite run keeps it. -->"
      }
    }

    var end: String {
      switch self {
      case .tickets: "<!-- End of the ticket workload. -->"
      case .telemetry: "<!-- End of the telemetry figures. -->"
      }
    }

    /// What the line after writing it says was written.
    var what: String {
      switch self {
      case .tickets: "the ticket workload"
      case .telemetry: "the telemetry figures"
      }
    }
  }

  /// Where the figures of the workloads this run does not measure are: each in a file of its own,
  /// written by a command of its own.
  static let otherReports =
    "Other workloads have files of their own, each written by its own command: two-row transfers "
    + "(Transfers.md, `--transfers`), transactions under contention (Contention.md, `--contention`), "
    + "cascade deletes (CascadeSpeed.md, `--cascade`), opening a store with a migration plan "
    + "(MigrationOpenSpeed.md, `--migration-open`), migrations (MigrationSpeed.md, `--migration`), "
    + "updates on an entity with a unique index (UniqueUpdates.md, `--unique-updates`), point gets on "
    + "PostgreSQL beside pgbench (PostgresGets.md, `--postgres-gets`), reads spread over standbys "
    + "(StandbyReads.md, `--standby-reads`), the remote backend (RemoteSpeed.md, `--remote`), the change feed "
    + "(ChangeFeedSpeed.md, `--changes`; ChangeFeedFloor.md, `--changes-floor`), copies (Copy.md, "
    + "`--copy`), aggregates and eager loading (QueryModelSpeed.md, `--queries`), readers beside a "
    + "writer (Readers.md, `--readers`) and what telemetry costs a point get (Telemetry.md, and below, "
    + "`--telemetry-overhead`)."

  /// The part of the Performance.md in `directory`, markers included; `nil` when there is none.
  static func part(_ part: Part, in directory: String) -> String? {
    guard let text = try? String(contentsOfFile: directory + "/" + fileName, encoding: .utf8),
      let begin = text.range(of: part.begin),
      let end = text.range(of: part.end, range: begin.upperBound..<text.endIndex)
    else { return nil }
    return String(text[begin.lowerBound..<end.upperBound])
  }

  /// The suite's report with the other commands' parts of the file it replaces appended.
  static func keepingParts(_ suite: String, in directory: String) -> String {
    Part.allCases.compactMap { part($0, in: directory) }.reduce(suite) { $0 + "\n\n" + $1 + "\n" }
  }

  /// Writes `section` as `part` of the Performance.md in `directory`: in place of the old one,
  /// or at the end when there is none.
  static func write(_ section: String, as part: Part, to directory: String) throws {
    let path = directory + "/" + fileName
    let text = part.begin + "\n\n" + section + "\n" + part.end
    var file = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Performance\n"
    if let old = self.part(part, in: directory), let range = file.range(of: old) {
      file.replaceSubrange(range, with: text)
    } else {
      file += (file.hasSuffix("\n") ? "\n" : "\n\n") + text + "\n"
    }
    try file.write(toFile: path, atomically: true, encoding: .utf8)
    say("wrote \(part.what) into \(path)")
  }
}
