import Coffer
import Logging

/// Keeps every line logged to its ``logger``, at every level, so a check can read what a
/// store and its backend logged.
final class LogCapture: Sendable {
  /// One logged line: its level, message and metadata (the logger's and the line's).
  struct Record: Sendable {
    var level: Logger.Level
    var message: String
    var metadata: Logger.Metadata

    /// The message and every metadata key and value, as one text to search.
    var text: String {
      ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ")
    }
  }

  private let records = LockedState<[Record]>([])

  /// A logger whose lines land here.
  var logger: Logger {
    Logger(label: "coffer.conformance") { _ in Handler(capture: self) }
  }

  /// A logger whose lines land here and, when given, in `other` too (at `other`'s level).
  func logger(alsoTo other: Logger?) -> Logger {
    guard let other else { return logger }
    return Logger(label: "coffer.conformance") { _ in
      MultiplexLogHandler([Handler(capture: self), other.handler])
    }
  }

  /// The lines logged so far.
  var lines: [Record] { records.withLock { $0 } }

  fileprivate func append(_ record: Record) { records.withLock { $0.append(record) } }

  private struct Handler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
      let merged = metadata.merging(event.metadata ?? [:]) { _, line in line }
      capture.append(Record(level: event.level, message: event.message.description, metadata: merged))
    }
  }
}
