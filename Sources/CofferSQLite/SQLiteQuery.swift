@_spi(Backend) import Coffer
import Foundation

/// A ``Coffer/Filter``, sort and slice as SQL text and the values bound to its parameters.
///
/// The text depends only on the query's shape, never on its values, so it is the key of the
/// connections' statement caches. The translation keeps the reference semantics of
/// `CompiledFilter` and `RowOrdering` exactly:
///
/// - a comparison never matches null (SQL's NULL result is treated as no match), `== nil` is
///   `IS NULL`;
/// - `not` is two-valued: `(f) IS NOT 1` is true wherever `f` is false *or* NULL;
/// - substring tests compare UTF-8 bytes (`instr`/`substr` on the column cast to a BLOB, the
///   pattern bound as a BLOB), so they are case-sensitive and `%`, `_`, `*` are ordinary;
/// - strings compare with SQLite's BINARY collation (byte order, which is code-point order);
/// - ascending puts NULL first and descending last (SQLite's order), ties broken by id.
///
/// SQLite's parser holds only so many open parentheses, so and/or/not nested deeper than
/// ``inlineDepth`` go into common table expressions (`WITH "T/filter 1" AS (SELECT id FROM T
/// WHERE …) … WHERE id IN "T/filter 1"`), each parsed on its own: any depth
/// `QueryValidator.maximumFilterDepth` allows compiles. `id IN part` is 1 where the part is 1 and
/// 0 where it is 0 *or* NULL, which the and/or/not around it cannot tell apart.
struct SQLiteQuery {
  var sql = ""
  var parameters: [Value] = []
  /// The common table expressions of a deep filter, deepest first, and their parameters.
  private var parts: [(sql: String, parameters: [Value])] = []

  /// The most levels of and/or/not written inline, well within SQLite's parser stack.
  static let inlineDepth = 12

  /// When set, the SQL orders ties by id *descending* and the caller must put each run of rows
  /// with equal sort keys back in id ascending order, then cut the offset and limit (see
  /// ``orderedSlice(_:_:)``). The sort-key positions.
  ///
  /// This is what a query whose last key is descending gets: an index on the sort fields holds
  /// ties in id order, so SQLite reads it backwards as `key DESC, id DESC` with no sorting at
  /// all, where `key DESC, id ASC` would make it sort every run of ties.
  var reversedTies: [Int]?

  /// `SELECT columns FROM table WHERE … ORDER BY … LIMIT ? OFFSET ?`.
  static func select(_ query: Query, in table: SQLiteTable) throws -> SQLiteQuery {
    var built = SQLiteQuery()
    built.sql = "SELECT \(table.selectList) FROM \(table.table)"
    try built.appendWhere(query.filter, table)
    var keys: [String] = []
    for key in query.sort { keys.append("\(try table.column(key.field)) \(key.ascending ? "ASC" : "DESC")") }
    let reversed = query.sort.last.map { !$0.ascending } ?? false
    keys.append("\(table.columns[table.schema.idPosition]) \(reversed ? "DESC" : "ASC")")
    built.sql += " ORDER BY " + keys.joined(separator: ", ")
    if reversed {
      built.reversedTies = query.sort.compactMap { table.schema.position(of: $0.field) }
      if let limit = query.limit {
        // One row more than needed shows whether the last run of ties is complete.
        built.sql += " LIMIT ?"
        let (sum, overflow) = query.offset.addingReportingOverflow(limit)
        built.parameters.append(.int(overflow || sum == .max ? -1 : Int64(sum + 1)))
      }
    } else if query.limit != nil || query.offset > 0 {
      built.sql += " LIMIT ? OFFSET ?"
      built.parameters.append(.int(Int64(query.limit ?? -1)))
      built.parameters.append(.int(Int64(query.offset)))
    }
    return built
  }

  /// Whether rows fetched for ``reversedTies`` may end inside a run of ties, so that the query
  /// must run again without a limit.
  static func mayCutTies(_ rows: [Row], _ query: Query, _ positions: [Int]) -> Bool {
    guard let limit = query.limit else { return false }
    let (wanted, overflow) = query.offset.addingReportingOverflow(limit)
    guard !overflow, wanted >= 1, wanted < .max, rows.count == wanted + 1 else { return false }
    return ties(rows[wanted - 1], rows[wanted], positions)
  }

  /// Rows in id descending order within runs of equal sort keys, put in id ascending order and
  /// cut to the query's offset and limit.
  static func orderedSlice(_ rows: [Row], _ query: Query, _ positions: [Int]) -> [Row] {
    var rows = rows
    var start = 0
    while start < rows.count {
      var end = start + 1
      while end < rows.count, ties(rows[start], rows[end], positions) { end += 1 }
      if end - start > 1 { rows[start..<end].reverse() }
      start = end
    }
    let from = min(rows.count, query.offset)
    let to = query.limit.map { from + min(rows.count - from, $0) } ?? rows.count
    return Array(rows[from..<to])
  }

  private static func ties(_ lhs: Row, _ rhs: Row, _ positions: [Int]) -> Bool {
    for position in positions where lhs[position] != rhs[position] { return false }
    return true
  }

  /// `SELECT count(*) FROM table WHERE …` (offset and limit are applied by the caller).
  static func count(_ filter: Filter, in table: SQLiteTable) throws -> SQLiteQuery {
    var built = SQLiteQuery()
    built.sql = "SELECT count(*) FROM \(table.table)"
    try built.appendWhere(filter, table)
    return built
  }

  /// `DELETE FROM table WHERE …`.
  static func delete(_ filter: Filter, in table: SQLiteTable) throws -> SQLiteQuery {
    var built = SQLiteQuery()
    built.sql = "DELETE FROM \(table.table)"
    try built.appendWhere(filter, table)
    return built
  }

  /// Appends ` WHERE …` and puts the filter's common table expressions, if any, in front of the
  /// statement (with their parameters first, as their text comes first).
  mutating func appendWhere(_ filter: Filter, _ table: SQLiteTable) throws {
    if case .all = filter { return }
    sql += " WHERE "
    try append(filter, table, depth: 0)
    guard !parts.isEmpty else { return }
    sql = "WITH " + parts.map(\.sql).joined(separator: ", ") + " " + sql
    parameters = parts.flatMap(\.parameters) + parameters
    parts = []
  }

  private mutating func append(_ filter: Filter, _ table: SQLiteTable, depth: Int) throws {
    if depth >= Self.inlineDepth {
      switch filter {
      case .and, .or, .not:
        try appendPart(filter, table)
        return
      default: break
      }
    }
    switch filter {
    case .all:
      sql += "1"
    case .compare(let field, let op, let value):
      let column = try table.column(field)
      if value.isNull {
        switch op {
        case .equal: sql += "\(column) IS NULL"
        case .notEqual: sql += "\(column) IS NOT NULL"
        default: sql += "0"
        }
        return
      }
      sql += "\(column) \(Self.sqlOperator(op)) ?"
      parameters.append(value)
    case .isIn(let field, let values):
      let column = try table.column(field)
      let present = values.filter { !$0.isNull }
      let matchesNull = present.count < values.count
      switch (present.isEmpty, matchesNull) {
      case (true, false): sql += "0"
      case (true, true): sql += "\(column) IS NULL"
      case (false, _):
        let list = Array(repeating: "?", count: present.count).joined(separator: ", ")
        sql += matchesNull ? "(\(column) IN (\(list)) OR \(column) IS NULL)" : "\(column) IN (\(list))"
        parameters.append(contentsOf: present)
      }
    case .string(let field, let match, let pattern):
      let column = try table.column(field)
      guard !pattern.isEmpty || match == .equalIgnoringCase else {
        sql += "\(column) IS NOT NULL"
        return
      }
      // Ignoring case, both sides are folded by the connection's own function (never
      // SQLite's lower(), which an ICU build changes): see SQLiteConnection.foldASCII.
      let text =
        match.ignoresCase
        ? "\(SQLiteConnection.foldFunction)(CAST(\(column) AS BLOB))" : "CAST(\(column) AS BLOB)"
      let folded = match.ignoresCase ? StringMatch.foldingASCIICase(pattern) : pattern
      let bytes = Value.bytes(Data(folded.utf8))
      switch match {
      case .contains, .containsIgnoringCase:
        sql += "instr(\(text), ?) > 0"
        parameters.append(bytes)
      case .hasPrefix, .hasPrefixIgnoringCase:
        sql += "substr(\(text), 1, ?) = ?"
        parameters.append(.int(Int64(folded.utf8.count)))
        parameters.append(bytes)
      case .hasSuffix, .hasSuffixIgnoringCase:
        sql += "substr(\(text), -?) = ?"
        parameters.append(.int(Int64(folded.utf8.count)))
        parameters.append(bytes)
      case .equalIgnoringCase:
        sql += "\(text) = ?"
        parameters.append(bytes)
      }
    case .compareFields(let field, let op, let other):
      // Both columns hold the same kind, stored alike; NULL on either side matches nothing.
      sql += "(\(try table.column(field)) \(Self.sqlOperator(op)) \(try table.column(other)))"
    case .and(let operands):
      try appendJoined(operands, "AND", empty: "1", table, depth: depth + 1)
    case .or(let operands):
      try appendJoined(operands, "OR", empty: "0", table, depth: depth + 1)
    case .not(let inner):
      sql += "(("
      try append(inner, table, depth: depth + 1)
      sql += ") IS NOT 1)"
    }
  }

  /// Appends `id IN part`, where `part` is a new common table expression selecting the ids of
  /// the rows the filter matches. Table expressions are named after the table, so they shadow
  /// no other table the statement reads.
  private mutating func appendPart(_ filter: Filter, _ table: SQLiteTable) throws {
    let id = table.columns[table.schema.idPosition]
    var part = SQLiteQuery()
    part.parts = parts
    part.sql = "SELECT \(id) FROM \(table.table) WHERE "
    try part.append(filter, table, depth: 0)
    let name = SQLiteIdentifier.quoted("\(table.tableName)/filter \(part.parts.count + 1)")
    parts = part.parts
    parts.append(("\(name) AS (\(part.sql))", part.parameters))
    sql += "\(id) IN \(name)"
  }

  private mutating func appendJoined(
    _ operands: [Filter], _ joiner: String, empty: String, _ table: SQLiteTable, depth: Int
  ) throws {
    guard !operands.isEmpty else {
      sql += empty
      return
    }
    sql += "("
    for (index, operand) in operands.enumerated() {
      if index > 0 { sql += " \(joiner) " }
      try append(operand, table, depth: depth)
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
