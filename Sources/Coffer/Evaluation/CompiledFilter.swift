/// A ``Filter`` with its field names resolved to row positions, ready to test rows.
///
/// This is the reference meaning of filters: the memory and property-list backends evaluate
/// with it, and the conformance suite compares every backend against it.
@_spi(Backend) public struct CompiledFilter: Sendable {
  indirect enum Node: Sendable {
    case all
    case none
    case isNull(Int)
    case isNotNull(Int)
    case compare(Int, ComparisonOperator, Value)
    case isIn(Int, Set<Value>, matchesNull: Bool)
    case string(Int, StringMatch, String)
    case compareFields(Int, ComparisonOperator, Int)
    case matches(Int, TextQuery)
    case and([Node])
    case or([Node])
    case not(Node)
  }

  let node: Node

  /// Resolves a filter against a schema.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for a field the schema does not have.
  public init(_ filter: Filter, schema: EntitySchema) throws {
    node = try Self.compile(filter, schema)
  }

  private static func compile(_ filter: Filter, _ schema: EntitySchema) throws -> Node {
    func position(_ field: String) throws -> Int {
      guard let position = schema.position(of: field) else {
        throw QueryValidator.unknownField(field, schema)
      }
      return position
    }
    switch filter {
    case .all: return .all
    case .compare(let field, let op, let value):
      let p = try position(field)
      if value.isNull {
        switch op {
        case .equal: return .isNull(p)
        case .notEqual: return .isNotNull(p)
        default: return .none
        }
      }
      return .compare(p, op, value)
    case .isIn(let field, let values):
      let p = try position(field)
      return .isIn(p, Set(values.filter { !$0.isNull }), matchesNull: values.contains(where: \.isNull))
    case .string(let field, let match, let pattern):
      return .string(try position(field), match, pattern)
    case .compareFields(let field, let op, let other):
      return .compareFields(try position(field), op, try position(other))
    case .matches(let field, let text):
      return .matches(try position(field), try TextSearch.parse(text, field: field, schema: schema))
    case .and(let parts): return .and(try parts.map { try compile($0, schema) })
    case .or(let parts): return .or(try parts.map { try compile($0, schema) })
    case .not(let inner): return .not(try compile(inner, schema))
    }
  }

  /// Whether a row matches.
  public func matches(_ row: Row) -> Bool { Self.evaluate(node, row) }

  private static func evaluate(_ node: Node, _ row: Row) -> Bool {
    switch node {
    case .all: return true
    case .none: return false
    case .isNull(let p): return row[p].isNull
    case .isNotNull(let p): return !row[p].isNull
    case .compare(let p, let op, let value):
      let stored = row[p]
      if stored.isNull { return false }
      return holds(op, ValueOrder.compare(stored, value))
    case .compareFields(let p, let op, let q):
      let (stored, other) = (row[p], row[q])
      if stored.isNull || other.isNull { return false }
      return holds(op, ValueOrder.compare(stored, other))
    case .isIn(let p, let values, let matchesNull):
      let stored = row[p]
      return stored.isNull ? matchesNull : values.contains(stored)
    case .string(let p, let match, let pattern):
      guard case .string(let text) = row[p] else { return false }
      return StringMatching.matches(text, match, pattern)
    case .matches(let p, let query):
      guard case .string(let text) = row[p] else { return false }
      return query.matches(text)
    case .and(let parts): return parts.allSatisfy { evaluate($0, row) }
    case .or(let parts): return parts.contains { evaluate($0, row) }
    case .not(let inner): return !evaluate(inner, row)
    }
  }

  /// Whether `op` holds between two values that compare as `order` (-1, 0 or 1).
  private static func holds(_ op: ComparisonOperator, _ order: Int) -> Bool {
    switch op {
    case .equal: order == 0
    case .notEqual: order != 0
    case .less: order < 0
    case .lessOrEqual: order <= 0
    case .greater: order > 0
    case .greaterOrEqual: order >= 0
    }
  }
}
