@_spi(Backend) import Coffer

/// A ``Filter`` on the wire: one key per object, as ``Value`` is — `{"and":[…]}`,
/// `{"compare":{"field":"age","op":">","value":{"int":30}}}`.
///
/// Decoding refuses nesting deeper than ``hardDepthLimit`` before it recurses further, so a
/// hostile body cannot exhaust the stack; the server applies its own, lower, configured limit.
package struct WireFilter: Codable, Sendable, Hashable {
  /// The filter.
  package var filter: Filter

  /// Wraps a filter.
  package init(_ filter: Filter) { self.filter = filter }

  /// How deeply filters may nest at all, whatever the server's configuration.
  package static let hardDepthLimit = 256

  private enum Key: String, CodingKey {
    case all, compare, `in`, string, compareFields, matches, and, or, not
  }
  private enum Part: String, CodingKey { case field, op, value, values, match, pattern, other, query }

  /// Decodes a filter written by ``encode(to:)``.
  package init(from decoder: any Decoder) throws {
    guard decoder.codingPath.count <= Self.hardDepthLimit * 2 else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: [], debugDescription: "The filter nests deeper than \(Self.hardDepthLimit) levels.")
      )
    }
    let container = try decoder.container(keyedBy: Key.self)
    guard let key = container.allKeys.first, container.allKeys.count == 1 else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "A filter must have exactly one kind key."))
    }
    switch key {
    case .all:
      filter = .all
    case .compare:
      let part = try container.nestedContainer(keyedBy: Part.self, forKey: key)
      filter = .compare(
        field: try part.decode(String.self, forKey: .field),
        op: try part.decode(ComparisonOperator.self, forKey: .op),
        value: try part.decode(Value.self, forKey: .value))
    case .in:
      let part = try container.nestedContainer(keyedBy: Part.self, forKey: key)
      filter = .isIn(
        try part.decode(String.self, forKey: .field), try part.decode([Value].self, forKey: .values))
    case .string:
      let part = try container.nestedContainer(keyedBy: Part.self, forKey: key)
      filter = .string(
        field: try part.decode(String.self, forKey: .field),
        match: try part.decode(StringMatch.self, forKey: .match),
        pattern: try part.decode(String.self, forKey: .pattern))
    case .compareFields:
      let part = try container.nestedContainer(keyedBy: Part.self, forKey: key)
      filter = .compareFields(
        field: try part.decode(String.self, forKey: .field),
        op: try part.decode(ComparisonOperator.self, forKey: .op),
        other: try part.decode(String.self, forKey: .other))
    case .matches:
      let part = try container.nestedContainer(keyedBy: Part.self, forKey: key)
      filter = .matches(
        field: try part.decode(String.self, forKey: .field),
        query: try part.decode(String.self, forKey: .query))
    case .and:
      filter = .and(try container.decode([WireFilter].self, forKey: key).map(\.filter))
    case .or:
      filter = .or(try container.decode([WireFilter].self, forKey: key).map(\.filter))
    case .not:
      filter = .not(try container.decode(WireFilter.self, forKey: key).filter)
    }
  }

  /// Encodes the filter under the name of its kind.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    switch filter {
    case .all:
      try container.encode(true, forKey: .all)
    case .compare(let field, let op, let value):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .compare)
      try part.encode(field, forKey: .field)
      try part.encode(op, forKey: .op)
      try part.encode(value, forKey: .value)
    case .isIn(let field, let values):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .in)
      try part.encode(field, forKey: .field)
      try part.encode(values, forKey: .values)
    case .string(let field, let match, let pattern):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .string)
      try part.encode(field, forKey: .field)
      try part.encode(match, forKey: .match)
      try part.encode(pattern, forKey: .pattern)
    case .compareFields(let field, let op, let other):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .compareFields)
      try part.encode(field, forKey: .field)
      try part.encode(op, forKey: .op)
      try part.encode(other, forKey: .other)
    case .matches(let field, let query):
      var part = container.nestedContainer(keyedBy: Part.self, forKey: .matches)
      try part.encode(field, forKey: .field)
      try part.encode(query, forKey: .query)
    case .and(let parts):
      try container.encode(parts.map(WireFilter.init), forKey: .and)
    case .or(let parts):
      try container.encode(parts.map(WireFilter.init), forKey: .or)
    case .not(let inner):
      try container.encode(WireFilter(inner), forKey: .not)
    }
  }
}

extension Filter {
  /// How deeply the filter nests: 1 for a leaf, one more for each `and`, `or` or `not` around it.
  package var depth: Int {
    switch self {
    case .all, .compare, .isIn, .string, .compareFields, .matches: 1
    case .and(let parts), .or(let parts): 1 + (parts.map(\.depth).max() ?? 0)
    case .not(let inner): 1 + inner.depth
    }
  }
}
