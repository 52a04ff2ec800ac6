import Coffer
import CofferTools
import Foundation

/// Progress as one JSON object a line, for `--progress json`: what a script or another program
/// reads while a long command runs.
enum ProgressLine {
  /// `{"command":"copy","entity":"Message","entityRows":…,"entityRowsCopied":…,"rows":…,"rowsDone":…,"seconds":…}`.
  static func json(_ progress: CopyProgress) -> String {
    json(
      command: "copy", entity: progress.entity, entityRows: progress.entityRows,
      entityRowsDone: progress.entityRowsCopied, rows: progress.totalRows, rowsDone: progress.rowsCopied,
      elapsed: progress.elapsed)
  }

  /// One progress object; keys sorted, so lines compare as text.
  static func json(
    command: String, entity: String?, entityRows: Int?, entityRowsDone: Int?, rows: Int?, rowsDone: Int,
    elapsed: Duration
  ) -> String {
    var object: [String: Any] = [
      "command": command, "rowsDone": rowsDone,
      "seconds": Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18,
    ]
    if let entity { object["entity"] = entity }
    if let entityRows { object["entityRows"] = entityRows }
    if let entityRowsDone { object["entityRowsDone"] = entityRowsDone }
    if let rows { object["rows"] = rows }
    guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else {
      return "{}"
    }
    return String(decoding: data, as: UTF8.self)
  }
}
