import Foundation

/// Docs/Performance.md holds both workloads: the chat messages, which the suite run writes, and
/// the tickets, which `--tickets` writes between two marker lines. Each run replaces only its
/// own part and keeps the other's as it was, so each part names the command and the run that
/// printed it.
enum PerformanceSections {
  static let fileName = "Performance.md"

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
    + "`--copy`), aggregates and eager loading (QueryModelSpeed.md, `--queries`) and readers beside a "
    + "writer (Readers.md, `--readers`)."
  static let ticketsBegin =
    "<!-- Ticket workload: written by coffer-bench --tickets; the suite run keeps it. -->"
  static let ticketsEnd = "<!-- End of the ticket workload. -->"

  /// The ticket part of the Performance.md in `directory`, markers included; `nil` when there
  /// is none.
  static func tickets(in directory: String) -> String? {
    guard let text = try? String(contentsOfFile: directory + "/" + fileName, encoding: .utf8),
      let begin = text.range(of: ticketsBegin),
      let end = text.range(of: ticketsEnd, range: begin.upperBound..<text.endIndex)
    else { return nil }
    return String(text[begin.lowerBound..<end.upperBound])
  }

  /// The suite's report with the ticket part of the file it replaces appended.
  static func keepingTickets(_ suite: String, in directory: String) -> String {
    guard let tickets = tickets(in: directory) else { return suite }
    return suite + "\n\n" + tickets + "\n"
  }

  /// Writes `section` (a ticket report) as the ticket part of the Performance.md in
  /// `directory`: in place of the old one, or after the chat part when there is none.
  static func writeTickets(_ section: String, to directory: String) throws {
    let path = directory + "/" + fileName
    let part = ticketsBegin + "\n\n" + section + "\n" + ticketsEnd
    var text = (try? String(contentsOfFile: path, encoding: .utf8)) ?? "# Performance\n"
    if let old = tickets(in: directory), let range = text.range(of: old) {
      text.replaceSubrange(range, with: part)
    } else {
      text += (text.hasSuffix("\n") ? "\n" : "\n\n") + part + "\n"
    }
    try text.write(toFile: path, atomically: true, encoding: .utf8)
    say("wrote the ticket workload into \(path)")
  }
}
