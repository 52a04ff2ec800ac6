@_spi(Backend) import Coffer
import PostgresNIO

/// A ``Coffer/Filter``, sort and slice as PostgreSQL text and the values bound to it.
///
/// The text depends only on the query's shape, never on its values (a list of ids is one array
/// parameter), so the server sees few distinct statements. The translation keeps the reference
/// semantics of `CompiledFilter` and `RowOrdering`:
///
/// - a comparison never matches null (SQL's NULL result counts as no match), `== nil` is
///   `IS NULL`;
/// - `not` is two-valued: `(f) IS NOT TRUE` is true wherever `f` is false *or* NULL;
/// - string tests are case-sensitive and literal (`strpos`, `left`, `right`: no `LIKE`), with an
///   exact check at character boundaries for stored text holding escapes (``PostgresText``);
/// - strings compare by code point (`COLLATE "C"` columns);
/// - ascending puts NULL first and descending last, ties broken by id ascending.
struct PostgresSQL {
  var sql = ""
  var binds = PostgresBindings()

  /// The `ORDER BY` keys of a sort: nulls first ascending and last descending, ties by id
  /// ascending.
  static func orderKeys(_ sort: [Sort], in table: PostgresTable) throws -> String {
    var keys: [String] = []
    var sortsByID = false
    for key in sort {
      let column = try table.column(key.field)
      keys.append(key.ascending ? "\(column) ASC NULLS FIRST" : "\(column) DESC NULLS LAST")
      if column == table.idColumn { sortsByID = true }
    }
    if !sortsByID { keys.append("\(table.idColumn) ASC") }
    return keys.joined(separator: ", ")
  }

  /// `SELECT columns FROM table WHERE … ORDER BY … LIMIT $ OFFSET $`; the id column alone for a
  /// query whose layout is the id field alone (see ``PostgresTable/readsIDsOnly(_:)``).
  static func select(_ query: Query, in table: PostgresTable) throws -> PostgresSQL {
    var built = PostgresSQL()
    let list = table.readsIDsOnly(query.layout) ? table.idColumn : table.selectList
    built.sql = "SELECT \(list) FROM \(table.table)"
    try built.appendWhere(query.filter, table)
    built.sql += " ORDER BY " + (try orderKeys(query.sort, in: table))
    if let limit = query.limit {
      built.sql += " LIMIT \(built.parameter(.int(Int64(max(0, limit))), .int))"
    }
    if query.offset > 0 {
      built.sql += " OFFSET \(built.parameter(.int(Int64(query.offset)), .int))"
    }
    return built
  }

  /// `SELECT count(*) FROM table WHERE …` (offset and limit are applied by the caller).
  static func count(_ filter: Filter, in table: PostgresTable) throws -> PostgresSQL {
    var built = PostgresSQL()
    built.sql = "SELECT count(*) FROM \(table.table)"
    try built.appendWhere(filter, table)
    return built
  }

  /// `DELETE FROM table WHERE …`.
  static func delete(_ filter: Filter, in table: PostgresTable) throws -> PostgresSQL {
    var built = PostgresSQL()
    built.sql = "DELETE FROM \(table.table)"
    try built.appendWhere(filter, table)
    return built
  }

  /// Binds a value and returns its placeholder.
  mutating func parameter(_ value: Value, _ kind: FieldKind) -> String {
    binds.append(value, as: kind)
    return "$\(binds.count)"
  }

  /// Binds an array and returns its placeholder, cast to its type.
  mutating func array(_ values: [Value], _ kind: FieldKind) -> String {
    binds.append(PostgresArrayParameter(values: values, kind: kind))
    return "$\(binds.count)::\(PostgresValues.arrayCast(kind))"
  }

  mutating func appendWhere(_ filter: Filter, _ table: PostgresTable) throws {
    if case .all = filter { return }
    sql += " WHERE "
    try append(filter, table)
  }

  private mutating func append(_ filter: Filter, _ table: PostgresTable) throws {
    switch filter {
    case .all:
      sql += "TRUE"
    case .compare(let field, let op, let value):
      let (column, kind) = try table.field(field)
      if value.isNull {
        switch op {
        case .equal: sql += "\(column) IS NULL"
        case .notEqual: sql += "\(column) IS NOT NULL"
        default: sql += "FALSE"
        }
        return
      }
      sql += "\(column) \(Self.sqlOperator(op)) \(parameter(value, kind))"
    case .isIn(let field, let values):
      let (column, kind) = try table.field(field)
      let present = values.filter { !$0.isNull }
      let matchesNull = present.count < values.count
      switch (present.isEmpty, matchesNull) {
      case (true, false): sql += "FALSE"
      case (true, true): sql += "\(column) IS NULL"
      case (false, _):
        let list = array(present, kind)
        sql += matchesNull ? "(\(column) = ANY(\(list)) OR \(column) IS NULL)" : "\(column) = ANY(\(list))"
      }
    case .string(let field, let match, var pattern):
      var column = try table.column(field)
      guard !pattern.isEmpty || match == .equalIgnoringCase else {
        sql += "\(column) IS NOT NULL"
        return
      }
      if match.ignoresCase {
        // translate() maps the 26 ASCII letters and nothing else, in every locale (lower() and
        // ILIKE follow the database's locale); the stored escapes use bytes 1 and 2, untouched.
        column = "translate(\(column), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')"
        pattern = StringMatch.foldingASCIICase(pattern)
      }
      let stored = PostgresText.escaped(pattern)
      let text = parameter(.string(pattern), .string)
      let length = stored.unicodeScalars.count
      // A match that starts inside an escape needs a pattern starting with U+0000…U+0002.
      let mayMisalign = (pattern.unicodeScalars.first?.value ?? 3) <= 2
      var term: String
      let atEnd: Bool
      switch match {
      case .contains, .containsIgnoringCase:
        term = "strpos(\(column), \(text)) > 0"
        atEnd = false
      case .hasPrefix, .hasPrefixIgnoringCase:
        term = "left(\(column), \(parameter(.int(Int64(length)), .int))::integer) = \(text)"
        atEnd = false
      case .hasSuffix, .hasSuffixIgnoringCase:
        term = "right(\(column), \(parameter(.int(Int64(length)), .int))::integer) = \(text)"
        atEnd = true
      case .equalIgnoringCase:
        term = "\(column) = \(text)"
        atEnd = false
      }
      let anchoredAtStart =
        match == .hasPrefix || match == .hasPrefixIgnoringCase || match == .equalIgnoringCase
      if mayMisalign, !anchoredAtStart {
        let regex = PostgresText.boundaryRegex(pattern, atEnd: atEnd)
        term =
          "(\(term) AND (strpos(\(column), chr(1)) = 0 OR \(column) ~ \(parameter(.string(regex), .string))))"
      }
      sql += term
    case .compareFields(let field, let op, let other):
      // Both columns hold the same kind, stored alike; NULL on either side matches nothing.
      sql += "(\(try table.column(field)) \(Self.sqlOperator(op)) \(try table.column(other)))"
    case .and(let operands):
      try appendJoined(operands, "AND", empty: "TRUE", table)
    case .or(let operands):
      try appendJoined(operands, "OR", empty: "FALSE", table)
    case .not(let inner):
      sql += "(("
      try append(inner, table)
      sql += ") IS NOT TRUE)"
    }
  }

  private mutating func appendJoined(
    _ operands: [Filter], _ joiner: String, empty: String, _ table: PostgresTable
  ) throws {
    guard !operands.isEmpty else {
      sql += empty
      return
    }
    sql += "("
    for (index, operand) in operands.enumerated() {
      if index > 0 { sql += " \(joiner) " }
      try append(operand, table)
    }
    sql += ")"
  }

  private static func sqlOperator(_ op: ComparisonOperator) -> String {
    switch op {
    case .equal: "="
    case .notEqual: "<>"
    case .less: "<"
    case .lessOrEqual: "<="
    case .greater: ">"
    case .greaterOrEqual: ">="
    }
  }
}
