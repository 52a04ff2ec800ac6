import ArgumentParser
import Foundation
import Logging

/// The options every data command takes to show what it does: a log on standard error
/// (`--log-level`, `--log-format`) and, on long commands, progress (`--progress`).
struct ObservingOptions: ParsableArguments {
  /// A log line's format.
  enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
  }

  /// How progress is shown.
  enum ProgressMode: String, ExpressibleByArgument, CaseIterable {
    /// A bar redrawn in place when standard error is a terminal; nothing otherwise.
    case auto
    /// One JSON object per line on standard error, terminal or not.
    case json
    /// Nothing.
    case none
  }

  @Option(
    name: .long,
    help: ArgumentHelp(
      "Log what the store and its backend do to standard error at this level and above: trace, debug, info, "
        + "notice, warning, error or critical. Nothing is logged without it. Lines name stores, entities and "
        + "codes, never a stored value.", valueName: "LEVEL"))
  var logLevel: Logger.Level?

  @Option(
    name: .long,
    help: ArgumentHelp("How log lines are written: text or json (one object a line).", valueName: "FORMAT"))
  var logFormat: LogFormat = .text

  @Option(
    name: .long,
    help: ArgumentHelp(
      "Progress of a long command on standard error: auto (a bar on a terminal, nothing otherwise), json (one "
        + "object a line) or none.", valueName: "MODE"))
  var progress: ProgressMode = .auto

  /// The logger the command's stores log to, or `nil` without `--log-level`.
  var logger: Logger? {
    guard let logLevel else { return nil }
    let format = logFormat
    var logger = Logger(label: "coffer") { label in
      switch format {
      case .text: StreamLogHandler.standardError(label: label)
      case .json: JSONLogHandler(label: label)
      }
    }
    logger.logLevel = logLevel
    return logger
  }

  /// Whether progress is drawn as a bar (auto, on a terminal).
  var progressOnTerminal: Bool { progress == .auto && isatty(STDERR_FILENO) == 1 }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

/// Writes each log line to standard error as one JSON object: `time` (ISO 8601), `level`,
/// `label`, `message`, `metadata` (strings), and `source`.
struct JSONLogHandler: LogHandler {
  let label: String
  var metadata: Logger.Metadata = [:]
  var logLevel: Logger.Level = .info

  subscript(metadataKey key: String) -> Logger.Metadata.Value? {
    get { metadata[key] }
    set { metadata[key] = newValue }
  }

  func log(event: LogEvent) {
    let merged = metadata.merging(event.metadata ?? [:]) { _, line in line }
    let line: [String: Any] = [
      "time": Date().formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true)),
      "level": event.level.rawValue, "label": label, "message": event.message.description,
      "source": event.source, "metadata": merged.mapValues { "\($0)" },
    ]
    guard var data = try? JSONSerialization.data(withJSONObject: line, options: [.sortedKeys]) else { return }
    data.append(0x0A)
    FileHandle.standardError.write(data)
  }
}
