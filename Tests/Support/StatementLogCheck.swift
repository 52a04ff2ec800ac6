@_spi(Backend) import Coffer
import Foundation
import Logging

/// What a SQL backend's statement log (`logStatements=on`) must show, checked the same way on
/// SQLite and PostgreSQL: a line per statement with its shape and duration, and never a value —
/// neither a stored one nor a column default, which DDL spells as a literal.
package enum StatementLogCheck {
  /// Text that stands for a value: it must never be logged.
  package static let marker = "L0GG3D-5d1a"

  /// Opens the store `url` names (with or without `logStatements=on`), writes and reads values
  /// holding ``marker`` and returns every line the store and its backend logged.
  package static func run(url: String, registry: BackendRegistry) async throws -> [Line] {
    let capture = Capture()
    let store = try await Store.open(url: url, registry: registry, logger: capture.logger)
    let entity = "Logged" + UUID().uuidString.prefix(8)
    let schema = try EntitySchema(
      name: entity,
      fields: [
        Field("id", .int), Field("note", .string),
        Field("tag", .string, isOptional: true, default: .string(marker + " default")),
      ], idField: "id")
    try await store.prepare(schemas: [schema])
    try await store.apply(
      ChangeSet([.insert(entity: entity, row: Row([1, .string(marker), .string(marker)]))]))
    _ = try await store.fetchRows(
      Query(entity: entity, filter: .compare(field: "note", op: .equal, value: .string(marker))))
    _ = try await store.getRows(entity: entity, ids: [1])
    try await store.close()
    return capture.lines
  }

  /// What is wrong with the lines a run logged with `logStatements=on`, each said as a sentence;
  /// empty when every statement's shape, duration and store are there, the insert, the reads,
  /// the table's creation and the commit among them, and no line holds ``marker``.
  package static func problems(in lines: [Line]) -> [String] {
    var problems: [String] = []
    let statements = lines.filter { $0.message == "Ran a statement" }
    let shapes = statements.compactMap { $0.metadata["coffer.sql"].map { "\($0)" } }
    if shapes.count != statements.count { problems.append("a statement line without its shape") }
    if !shapes.contains(where: { $0.contains("INSERT") }) { problems.append("the insert is not logged") }
    if !shapes.contains(where: { $0.hasPrefix("SELECT") }) { problems.append("the reads are not logged") }
    if !shapes.contains(where: { $0.contains("CREATE TABLE") }) {
      problems.append("the table's creation is not logged")
    }
    if !shapes.contains("COMMIT") { problems.append("the commit is not logged") }
    for line in statements {
      let milliseconds = line.metadata["coffer.milliseconds"].flatMap { Double("\($0)") }
      if milliseconds.map({ $0 >= 0 }) != true {
        problems.append("no duration in milliseconds: \(line.text)")
      }
      if line.metadata["coffer.store"] == nil { problems.append("no store name: \(line.text)") }
    }
    for line in lines where line.text.contains(marker) { problems.append("a value in the log: \(line.text)") }
    return problems
  }

  /// One logged line.
  package struct Line: Sendable {
    package var message: String
    package var metadata: Logger.Metadata
    /// The message and every metadata value, to search.
    package var text: String { ([message] + metadata.map { "\($0.key)=\($0.value)" }).joined(separator: " ") }
  }

  private final class Capture: Sendable {
    let lines_ = LockedState<[Line]>([])
    var lines: [Line] { lines_.withLock { $0 } }
    var logger: Logger {
      var logger = Logger(label: "coffer.test") { _ in Handler(capture: self) }
      logger.logLevel = .trace
      return logger
    }
  }

  private struct Handler: LogHandler {
    let capture: Capture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace
    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
      get { metadata[key] }
      set { metadata[key] = newValue }
    }
    func log(event: LogEvent) {
      let merged = metadata.merging(event.metadata ?? [:]) { _, line in line }
      capture.lines_.withLock { $0.append(Line(message: event.message.description, metadata: merged)) }
    }
  }
}
