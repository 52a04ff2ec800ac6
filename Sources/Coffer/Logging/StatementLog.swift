import Logging

/// The statement log of a SQL backend: every statement's shape and how long it took, at
/// `info`, for finding slow queries (what GRDB's `trace` shows).
///
/// A shape is the statement's text as the backend sent it: values are bound parameters
/// (`?1`, `$1`), never part of it. Quoted literals — a column default in a `CREATE TABLE` or
/// `ALTER TABLE` — are shown as `?` too, so no value reaches the log. Turned on by a backend's
/// `logStatements=on` URL option (SQLite, PostgreSQL).
package struct StatementLog: Sendable {
  /// Where the lines go, with the store's name as `coffer.store`.
  let logger: Logger
  /// The shapes of the statements logged so far.
  let shapes = StatementShapes()

  /// A log writing to `logger`.
  package init(logger: Logger) { self.logger = logger }

  /// Logs one statement that ran for `nanoseconds`.
  package func record(_ sql: String, nanoseconds: Int64) {
    logger.info(
      "Ran a statement",
      metadata: [
        "coffer.sql": .string(shapes.shape(of: sql).text),
        "coffer.milliseconds": .string(Self.milliseconds(nanoseconds)),
      ])
  }

  /// Logs one statement that ran from `started` until now.
  package func record(_ sql: String, since started: ContinuousClock.Instant) {
    record(sql, nanoseconds: (ContinuousClock.now - started).nanoseconds)
  }

  /// Milliseconds with three decimals (`0.042`).
  static func milliseconds(_ nanoseconds: Int64) -> String {
    let micros = max(0, nanoseconds) / 1_000
    let fraction = String(micros % 1_000)
    return "\(micros / 1_000)." + String(repeating: "0", count: 3 - fraction.count) + fraction
  }

  /// A statement's text with every quoted literal (`'…'`, `X'…'`, `E'…'`) replaced by `?` and
  /// each run of white space made one space. Quoted identifiers (`"…"`) stay: they are names.
  package static func shape(of sql: String) -> String {
    var shape = ""
    shape.reserveCapacity(sql.utf8.count)
    var characters = Array(sql.unicodeScalars)[...]
    var lastWasSpace = false
    while let scalar = characters.popFirst() {
      switch scalar {
      case "'":
        // A literal: drop a prefix letter (X, E, B) already written, skip to its closing quote
        // ('' is a quote inside it).
        if let last = shape.unicodeScalars.last, "XxEeBb".unicodeScalars.contains(last),
          shape.unicodeScalars.dropLast().last.map({ !isWordScalar($0) }) ?? true
        {
          shape.unicodeScalars.removeLast()
        }
        while let next = characters.popFirst() {
          if next == "'" {
            if characters.first == "'" { characters.removeFirst() } else { break }
          }
        }
        shape.append("?")
        lastWasSpace = false
      case "\"":
        shape.unicodeScalars.append(scalar)
        while let next = characters.popFirst() {
          shape.unicodeScalars.append(next)
          if next == "\"" {
            if characters.first == "\"" {
              characters.removeFirst()
              shape.unicodeScalars.append("\"")
            } else {
              break
            }
          }
        }
        lastWasSpace = false
      case " ", "\n", "\t", "\r":
        if !lastWasSpace && !shape.isEmpty { shape.append(" ") }
        lastWasSpace = true
      default:
        shape.unicodeScalars.append(scalar)
        lastWasSpace = false
      }
    }
    if lastWasSpace, shape.last == " " { shape.removeLast() }
    return shape
  }

  private static func isWordScalar(_ scalar: Unicode.Scalar) -> Bool {
    scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) || scalar == "_"
  }
}

extension StatementLog {
  /// The value of a `logStatements=` URL option: `on`/`true`/`1` or `off`/`false`/`0`; `nil`
  /// for anything else.
  package static func switchValue(_ text: String) -> Bool? {
    switch text.lowercased() {
    case "on", "true", "1", "yes": true
    case "off", "false", "0", "no": false
    default: nil
    }
  }
}
