import Coffer
import CofferTools
import Foundation

/// How far a long command has come, whatever the command: what ``ProgressDisplay`` draws as a
/// bar or writes as a JSON line. Rows count what the command reads or writes; a migration counts
/// steps.
struct CommandProgress: Sendable {
  /// The command: `copy`, `export`, `import`, `verify`, `migrate` or `sync`.
  var command: String
  /// What the command works on now: an entity, a migration step, or a sync direction.
  var entity: String?
  /// Rows of ``entity`` in all, when known.
  var entityRows: Int?
  /// Rows of ``entity`` done.
  var entityRowsDone: Int?
  /// Rows in all, when known.
  var rows: Int?
  /// Rows done.
  var rowsDone: Int
  /// A migration's steps in all.
  var steps: Int?
  /// A migration's steps applied.
  var stepsDone: Int?
  /// Time since the command began.
  var elapsed: Duration

  /// Whether the whole command (not only ``entity``) is done: a line that is always shown.
  var isFinished: Bool {
    if let steps, let stepsDone { return stepsDone == steps }
    return rows.map { rowsDone == $0 } ?? false
  }
}

extension CommandProgress {
  /// A copy's progress.
  init(_ progress: CopyProgress) {
    self.init(
      command: "copy", entity: progress.entity, entityRows: progress.entityRows,
      entityRowsDone: progress.entityRowsCopied, rows: progress.totalRows, rowsDone: progress.rowsCopied,
      elapsed: progress.elapsed)
  }

  /// The progress of an export, an import or a verification.
  init(_ command: String, _ progress: RowProgress) {
    self.init(
      command: command, entity: progress.entity, entityRows: progress.entityRows,
      entityRowsDone: progress.entityRowsDone, rows: progress.totalRows, rowsDone: progress.rowsDone,
      elapsed: progress.elapsed)
  }

  /// A migration's progress, after a step.
  init(_ progress: MigrationProgress, elapsed: Duration) {
    self.init(
      command: "migrate", entity: progress.step, rowsDone: progress.rowsTouched, steps: progress.steps,
      stepsDone: progress.stepsDone, elapsed: elapsed)
  }
}

/// Progress as one JSON object a line, for `--progress json`: what a script or another program
/// reads while a long command runs.
enum ProgressLine {
  /// `{"command":"copy","entity":"Message","entityRows":…,"entityRowsDone":…,"rows":…,"rowsDone":…,"seconds":…}`;
  /// keys sorted, so lines compare as text; keys whose value is unknown left out.
  static func json(_ progress: CommandProgress) -> String {
    var object: [String: Any] = [
      "command": progress.command, "rowsDone": progress.rowsDone, "seconds": progress.elapsed.seconds,
    ]
    if let entity = progress.entity { object["entity"] = entity }
    if let entityRows = progress.entityRows { object["entityRows"] = entityRows }
    if let entityRowsDone = progress.entityRowsDone { object["entityRowsDone"] = entityRowsDone }
    if let rows = progress.rows { object["rows"] = rows }
    if let steps = progress.steps { object["steps"] = steps }
    if let stepsDone = progress.stepsDone { object["stepsDone"] = stepsDone }
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
      return "{}"
    }
    return String(decoding: data, as: UTF8.self)
  }
}

extension Duration {
  /// The duration in seconds, for rates and messages.
  var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
