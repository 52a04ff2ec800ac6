import Foundation

/// Entity and field names as SQL identifiers: any Unicode text, always quoted, never spliced
/// into SQL as it is.
package enum SQLIdentifier {
  /// The name quoted as an SQL identifier: `"name"`, with inner quotes doubled (the standard
  /// rule, which SQLite and PostgreSQL share).
  package static func quoted(_ name: String) -> String {
    "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}
