import ArgumentParser
import Foundation
import Logging

/// The options every command takes to log what it does to standard error: `--log-level` and
/// `--log-format`.
struct LoggingOptions: ParsableArguments {
  /// A log line's format.
  enum LogFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json
  }

  @Option(
    name: .long,
    help: ArgumentHelp(
      "Log what the store and its backend do to standard error at this level and above: trace, debug, info, "
        + "notice, warning, error or critical. Lines name stores, entities and codes, never a stored value.",
      valueName: "LEVEL"))
  var logLevel: Logger.Level?

  @Option(
    name: .long,
    help: ArgumentHelp("How log lines are written: text or json (one object a line).", valueName: "FORMAT"))
  var logFormat: LogFormat = .text

  /// These options as arguments, for a child process that should log as this one does.
  var arguments: [String] {
    guard let logLevel else { return [] }
    return ["--log-level", logLevel.rawValue, "--log-format", logFormat.rawValue]
  }

  /// The logger the command's stores log to, or `nil` without `--log-level`.
  var logger: Logger? { logLevel.map { logger(label: "coffer", level: $0) } }

  /// A logger at `--log-level`, or at `level` when it is not given: what a server logs to, which
  /// logs its notices without being asked.
  func logger(label: String, defaultLevel level: Logger.Level) -> Logger {
    logger(label: label, level: logLevel ?? level)
  }

  private func logger(label: String, level: Logger.Level) -> Logger {
    let format = logFormat
    var logger = Logger(label: label) { label in
      switch format {
      case .text: StreamLogHandler.standardError(label: label)
      case .json: JSONLogHandler(label: label)
      }
    }
    logger.logLevel = level
    return logger
  }
}

/// The options every long data command takes: ``LoggingOptions`` and progress (`--progress`).
struct ObservingOptions: ParsableArguments {
  @OptionGroup var logging: LoggingOptions

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
      "Progress of a long command on standard error: auto (a bar on a terminal, nothing otherwise), json (one "
        + "object a line) or none.", valueName: "MODE"))
  var progress: ProgressMode = .auto

  /// The logger the command's stores log to, or `nil` without `--log-level`.
  var logger: Logger? { logging.logger }

  /// Where the command shows its progress: a bar when `--progress auto` (the default) and
  /// standard error is a terminal, JSON lines with `--progress json`, else nowhere.
  func progressDisplay() -> ProgressDisplay {
    switch progress {
    case .json: ProgressDisplay(.json)
    case .auto: ProgressDisplay(isatty(STDERR_FILENO) == 1 ? .bar : .quiet)
    case .none: ProgressDisplay(.quiet)
    }
  }
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
