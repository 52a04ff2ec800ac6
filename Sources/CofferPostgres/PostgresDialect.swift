@_spi(Backend) import Coffer
import CofferSQL
import PostgresNIO

/// PostgreSQL's spelling of the statements ``CofferSQL/SQLStatement`` builds: `$n` placeholders
/// over `PostgresBindings` (each value sent in binary with its column's type), `TRUE`/`FALSE`,
/// `NULLS FIRST`/`NULLS LAST` said outright (PostgreSQL's default is the other way), a list of
/// values as one array parameter (so a statement's text does not grow with the list), and:
///
/// - string tests are case-sensitive and literal (`strpos`, `left`, `right`: no `LIKE`), with an
///   exact check at character boundaries for stored text holding escapes (``PostgresText``);
///   ignoring case, `translate()` folds the 26 ASCII letters and nothing else;
/// - strings compare by code point (`COLLATE "C"` columns);
/// - names compare exactly as written, and any depth of and/or/not parses inline;
/// - aggregates: see ``PostgresAggregate``.
package enum PostgresDialect: SQLDialect {
  package typealias Bindings = PostgresBindings

  package static func placeholder(_ number: Int) -> String { "$\(number)" }

  package static let alwaysTrue = "TRUE"
  package static let alwaysFalse = "FALSE"
  package static let inlineDepth = Int.max

  package static func orderKey(_ column: String, ascending: Bool) -> String {
    ascending ? "\(column) ASC NULLS FIRST" : "\(column) DESC NULLS LAST"
  }

  package static func membership(
    _ column: String, _ values: [Value], _ kind: FieldKind, into statement: inout PostgresSQL
  ) -> String {
    "\(column) = ANY(\(statement.array(values, kind)))"
  }

  package static func textMatch(
    _ field: String, of table: SQLTableLayout, _ query: String, into statement: inout PostgresSQL
  ) throws -> String {
    // PostgreSQL's text search folds and splits words its own way, so the store resolves every
    // match into the ids of the rows it selects before a filter gets here (see TextSearch).
    throw CofferError(
      .unsupported,
      "PostgreSQL does not evaluate full-text matches in SQL; search through the Store, which resolves them first."
    )
  }

  package static func stringTest(
    _ column: String, _ match: StringMatch, _ pattern: String, into statement: inout PostgresSQL
  ) -> String {
    var column = column
    var pattern = pattern
    if match.ignoresCase {
      // translate() maps the 26 ASCII letters and nothing else, in every locale (lower() and
      // ILIKE follow the database's locale); the stored escapes use bytes 1 and 2, untouched.
      column = "translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
      pattern = StringMatch.foldingASCIICase(pattern)
    }
    let stored = PostgresText.escaped(pattern)
    let text = statement.bind(.string(pattern), .string)
    let length = Value.int(Int64(stored.unicodeScalars.count))
    // A match that starts inside an escape needs a pattern starting with U+0000…U+0002.
    let mayMisalign = (pattern.unicodeScalars.first?.value ?? 3) <= 2
    var term: String
    let atEnd: Bool
    switch match {
    case .contains, .containsIgnoringCase:
      term = "strpos(\(column), \(text)) > 0"
      atEnd = false
    case .hasPrefix, .hasPrefixIgnoringCase:
      term = "left(\(column), \(statement.bind(length, .int))::integer) = \(text)"
      atEnd = false
    case .hasSuffix, .hasSuffixIgnoringCase:
      term = "right(\(column), \(statement.bind(length, .int))::integer) = \(text)"
      atEnd = true
    case .equalIgnoringCase:
      term = "\(column) = \(text)"
      atEnd = false
    }
    let anchoredAtStart =
      match == .hasPrefix || match == .hasPrefixIgnoringCase || match == .equalIgnoringCase
    if mayMisalign, !anchoredAtStart {
      let regex = statement.bind(.string(PostgresText.boundaryRegex(pattern, atEnd: atEnd)), .string)
      term = "(\(term) AND (strpos(\(column), chr(1)) = 0 OR \(column) ~ \(regex)))"
    }
    return term
  }

  /// `LIMIT $n` for a limit, `OFFSET $n` for an offset past the first row.
  package static func appendSlice(limit: Int?, offset: Int, to statement: inout PostgresSQL) {
    if let limit {
      statement.sql += " LIMIT \(statement.bind(.int(Int64(max(0, limit))), .int))"
    }
    if offset > 0 {
      statement.sql += " OFFSET \(statement.bind(.int(Int64(offset)), .int))"
    }
  }

  package static func comparedName(_ name: String) -> String { name }

  package static func columnType(_ kind: FieldKind) -> String { PostgresValues.columnType(kind) }

  package static func freshName(for wanted: String, avoiding taken: Set<String>) -> String {
    PostgresIdentifier.fresh(for: wanted, avoiding: taken)
  }

  /// Booleans have no `min`/`max`: `bool_and` and `bool_or` are the same thing. UUIDs and bytes
  /// compare through their lowercase hex text (`uuid::text`, `encode(bytea, 'hex')`) in
  /// `COLLATE "C"`, whose order is their bytes', since `min`/`max` on `uuid` and `bytea` are
  /// missing from the servers Coffer supports.
  package static func extreme(_ column: String, _ kind: FieldKind, smallest: Bool) -> String {
    let function = smallest ? "min" : "max"
    switch kind {
    case .bool: return smallest ? "bool_and(\(column))" : "bool_or(\(column))"
    case .uuid: return "\(function)(\(column)::text COLLATE \"C\")::uuid"
    case .bytes: return "decode(\(function)(encode(\(column), 'hex') COLLATE \"C\"), 'hex')"
    default: return "\(function)(\(column))"
    }
  }

  /// `sum(bigint)` is `numeric`, read as text: a sum outside Int64 is valueOutOfRange, whatever
  /// the order the server added the rows in.
  package static func integerSum(_ column: String) -> String { "sum(\(column))::text" }

  /// The `sum` of the finite values (the sum is not used when there is an infinity); `exact`
  /// adds them as `numeric`, which cannot overflow, read back as text.
  package static func doubleSum(_ column: String, exact: Bool) -> String {
    let finite = "abs(\(column)) <> 'Infinity'::float8"
    return exact
      ? "(sum(\(column)::numeric) FILTER (WHERE \(finite)))::text" : "sum(\(column)) FILTER (WHERE \(finite))"
  }
}

/// A statement in PostgreSQL's dialect.
package typealias PostgresSQL = SQLStatement<PostgresDialect>

extension PostgresBindings: SQLBindings {}

extension SQLStatement where Dialect == PostgresDialect {
  /// Binds an array of values of one kind and returns its placeholder, cast to its type.
  mutating func array(_ values: [Value], _ kind: FieldKind) -> String {
    bindings.append(PostgresArrayParameter(values: values, kind: kind))
    return "$\(bindings.count)::\(PostgresValues.arrayCast(kind))"
  }
}
