@_spi(Backend) import Coffer

/// An ``Aggregation/Function`` on the wire: `{"count":true}`, `{"sum":"amount"}`…
package struct WireFunction: Codable, Sendable, Hashable {
  /// The function.
  package var function: Aggregation.Function

  /// Wraps a function.
  package init(_ function: Aggregation.Function) { self.function = function }

  private enum Key: String, CodingKey { case count, countDistinct, sum, min, max, average }

  /// Decodes a function written by ``encode(to:)``.
  package init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    guard let key = container.allKeys.first, container.allKeys.count == 1 else {
      throw DecodingError.dataCorrupted(
        .init(codingPath: decoder.codingPath, debugDescription: "A function must have exactly one kind key."))
    }
    switch key {
    case .count:
      _ = try container.decode(Bool.self, forKey: key)
      function = .count
    case .countDistinct: function = .countDistinct(try container.decode(String.self, forKey: key))
    case .sum: function = .sum(try container.decode(String.self, forKey: key))
    case .min: function = .min(try container.decode(String.self, forKey: key))
    case .max: function = .max(try container.decode(String.self, forKey: key))
    case .average: function = .average(try container.decode(String.self, forKey: key))
    }
  }

  /// Encodes the function under its name, with its field.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: Key.self)
    switch function {
    case .count: try container.encode(true, forKey: .count)
    case .countDistinct(let field): try container.encode(field, forKey: .countDistinct)
    case .sum(let field): try container.encode(field, forKey: .sum)
    case .min(let field): try container.encode(field, forKey: .min)
    case .max(let field): try container.encode(field, forKey: .max)
    case .average(let field): try container.encode(field, forKey: .average)
    }
  }
}

/// An ``Aggregation`` on the wire: the query (its sort, offset and limit are ignored), the
/// function and the grouping field.
package struct WireAggregation: Codable, Sendable, Hashable {
  /// The entity, filter and layout.
  package var query: WireQuery
  /// What to compute.
  package var function: WireFunction
  /// The grouping field, or `nil` for one result.
  package var groupBy: String?

  /// A wire aggregation for a core one.
  package init(_ aggregation: Aggregation) {
    query = WireQuery(aggregation.query)
    function = WireFunction(aggregation.function)
    groupBy = aggregation.groupBy
  }

  /// The core aggregation.
  package var aggregation: Aggregation {
    var aggregation = Aggregation(
      entity: query.entity, filter: query.filter?.filter ?? .all, function.function)
    aggregation.groupBy = groupBy
    aggregation.query.layout = query.layout
    return aggregation
  }
}

/// One group of an aggregate's result.
package struct WireGroup: Codable, Sendable, Hashable {
  /// The group's key (null without grouping).
  package var key: Value
  /// The aggregate over the group.
  package var value: Value

  /// A group.
  package init(key: Value, value: Value) {
    self.key = key
    self.value = value
  }
}

/// An aggregate's groups, in ascending key order.
package struct WireGroups: Codable, Sendable, Hashable {
  /// The groups.
  package var groups: [WireGroup]

  /// Groups.
  package init(groups: [WireGroup]) { self.groups = groups }
}
