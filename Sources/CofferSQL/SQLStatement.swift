@_spi(Backend) import Coffer

/// SQL text and the values bound to its placeholders, built in one engine's ``SQLDialect``.
///
/// The text depends only on a query's shape, never on its values, so it is the key of the
/// backends' statement caches. Filters translate with the reference semantics of
/// `CompiledFilter` exactly:
///
/// - a comparison never matches null (SQL's NULL result counts as no match), `== nil` is
///   `IS NULL`;
/// - `not` is two-valued: `(f) IS NOT TRUE` holds wherever `f` is false *or* NULL;
/// - string tests are the dialect's literal, case-sensitive ones (never `LIKE`);
/// - strings compare by code point, as the backends declare their columns.
///
/// and/or/not nested deeper than the dialect's ``SQLDialect/inlineDepth`` go into common table
/// expressions (`WITH "T/filter 1" AS (SELECT id FROM T WHERE …) … WHERE id IN "T/filter 1"`),
/// each parsed on its own, so any depth `QueryValidator.maximumFilterDepth` allows compiles.
/// `id IN part` is true where the part is true and false where it is false *or* NULL, which the
/// and/or/not around it cannot tell apart.
package struct SQLStatement<Dialect: SQLDialect> {
  /// The text.
  package var sql: String
  /// The values bound to its placeholders, in order.
  package var bindings: Dialect.Bindings
  /// The common table expressions of a deep filter, deepest first, until ``appendWhere(_:_:)``
  /// puts them in front of the statement.
  @usableFromInline var parts: [String] = []

  /// A statement that starts with `sql` and binds nothing yet.
  @inlinable
  package init(_ sql: String = "") {
    self.sql = sql
    self.bindings = Dialect.Bindings()
  }

  /// Binds a value as a parameter of a field of `kind` and returns its placeholder.
  @inlinable
  package mutating func bind(_ value: Value, _ kind: FieldKind) -> String {
    bindings.append(value, as: kind)
    return Dialect.placeholder(bindings.count)
  }

  /// Appends ` WHERE …` for a filter (nothing for `.all`), and puts the filter's common table
  /// expressions, if any, in front of the statement.
  @inlinable
  package mutating func appendWhere(_ filter: Filter, _ table: SQLTableLayout) throws {
    if case .all = filter { return }
    sql += " WHERE "
    try append(filter, table, depth: 0)
    guard !parts.isEmpty else { return }
    sql = "WITH " + parts.joined(separator: ", ") + " " + sql
    parts = []
  }

  @inlinable
  mutating func append(_ filter: Filter, _ table: SQLTableLayout, depth: Int) throws {
    if depth >= Dialect.inlineDepth {
      switch filter {
      case .and, .or, .not:
        try appendPart(filter, table)
        return
      default: break
      }
    }
    switch filter {
    case .all:
      sql += Dialect.alwaysTrue
    case .compare(let field, let op, let value):
      let (column, kind) = try table.field(field)
      if value.isNull {
        switch op {
        case .equal: sql += "\(column) IS NULL"
        case .notEqual: sql += "\(column) IS NOT NULL"
        default: sql += Dialect.alwaysFalse
        }
        return
      }
      let placeholder = bind(value, kind)
      sql += "\(column) \(Self.sqlOperator(op)) \(placeholder)"
    case .isIn(let field, let values):
      let (column, kind) = try table.field(field)
      let present = values.filter { !$0.isNull }
      let matchesNull = present.count < values.count
      switch (present.isEmpty, matchesNull) {
      case (true, false): sql += Dialect.alwaysFalse
      case (true, true): sql += "\(column) IS NULL"
      case (false, _):
        let member = Dialect.membership(column, present, kind, into: &self)
        sql += matchesNull ? "(\(member) OR \(column) IS NULL)" : member
      }
    case .string(let field, let match, let pattern):
      let column = try table.column(field)
      guard !pattern.isEmpty || match == .equalIgnoringCase else {
        sql += "\(column) IS NOT NULL"
        return
      }
      let term = Dialect.stringTest(column, match, pattern, into: &self)
      sql += term
    case .matches(let field, let query):
      sql += try Dialect.textMatch(field, of: table, query, into: &self)
    case .compareFields(let field, let op, let other):
      // Both columns hold the same kind, stored alike; NULL on either side matches nothing.
      sql += "(\(try table.column(field)) \(Self.sqlOperator(op)) \(try table.column(other)))"
    case .and(let operands):
      try appendJoined(operands, "AND", empty: Dialect.alwaysTrue, table, depth: depth + 1)
    case .or(let operands):
      try appendJoined(operands, "OR", empty: Dialect.alwaysFalse, table, depth: depth + 1)
    case .not(let inner):
      sql += "(("
      try append(inner, table, depth: depth + 1)
      sql += ") IS NOT \(Dialect.alwaysTrue))"
    }
  }

  /// Appends `id IN part`, where `part` is a new common table expression selecting the ids of
  /// the rows the filter matches. Table expressions are named after the table, so they shadow
  /// no other table the statement reads; their values are bound as they are written, which
  /// numbered placeholders allow.
  @inlinable
  mutating func appendPart(_ filter: Filter, _ table: SQLTableLayout) throws {
    let outer = sql
    sql = "SELECT \(table.idColumn) FROM \(table.table) WHERE "
    try append(filter, table, depth: 0)
    let name = SQLIdentifier.quoted("\(table.tableName)/filter \(parts.count + 1)")
    parts.append("\(name) AS (\(sql))")
    sql = outer + "\(table.idColumn) IN \(name)"
  }

  @inlinable
  mutating func appendJoined(
    _ operands: [Filter], _ joiner: String, empty: String, _ table: SQLTableLayout, depth: Int
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

  @inlinable
  static func sqlOperator(_ op: ComparisonOperator) -> String {
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
