@_spi(Backend) import Coffer
import Foundation

/// ``WireQuery`` in JSON written and read by hand: every read a client makes sends one, and
/// `JSONEncoder` and `JSONDecoder` spent more on a point get's query (a keyed container for each
/// part of the filter) than the server spent reading the row.
///
/// The form is exactly the one `Codable` gives (the Formats article's), members left out when they
/// are `nil`. ``read(_:)`` takes any JSON of that form (white space, keys in any order, `null`
/// for a member left out, escapes) except a query carrying a whole ``WireQuery/layout``, and
/// answers `nil` for anything else, for the caller to hand to `JSONDecoder`, whose error says
/// what is wrong.
package enum WireQueryJSON {
  /// The query as JSON.
  ///
  /// - Throws: `EncodingError.invalidValue` for a NaN in the filter, which no store holds.
  package static func write(_ query: WireQuery) throws -> [UInt8] {
    var text = JSONText(capacity: 128)
    try append(query, to: &text)
    return text.bytes
  }

  /// A query's object.
  static func append(_ query: WireQuery, to text: inout JSONText) throws {
    text += "{"
    WireJSON.appendKey("entity", first: true, to: &text)
    text.appendQuoted(query.entity)
    if let filter = query.filter {
      WireJSON.appendKey("filter", to: &text)
      try append(filter.filter, to: &text)
    }
    if let sort = query.sort {
      WireJSON.appendKey("sort", to: &text)
      text += "["
      for (index, key) in sort.enumerated() {
        if index > 0 { text += "," }
        text += #"{"field":"#
        text.appendQuoted(key.field)
        text += key.ascending ? #","ascending":true}"# : #","ascending":false}"#
      }
      text += "]"
    }
    if let limit = query.limit {
      WireJSON.appendKey("limit", to: &text)
      text += String(limit)
    }
    if let offset = query.offset {
      WireJSON.appendKey("offset", to: &text)
      text += String(offset)
    }
    if let layout = query.layout {
      // A whole schema is rare on the wire (a layout is named by its digest once the server has
      // it), so it keeps `Codable`'s writing.
      WireJSON.appendKey("layout", to: &text)
      text.bytes.append(contentsOf: try JSONEncoder().encode(layout))
    }
    if let digest = query.layoutDigest {
      WireJSON.appendKey("layoutDigest", to: &text)
      text.appendQuoted(digest)
    }
    if let after = query.after {
      WireJSON.appendKey("after", to: &text)
      text += #"{"values":"#
      try WireJSON.append(after.values, to: &text)
      text += "}"
    }
    if let select = query.select {
      WireJSON.appendKey("select", to: &text)
      text += "["
      for (index, field) in select.enumerated() {
        if index > 0 { text += "," }
        text.appendQuoted(field)
      }
      text += "]"
    }
    text += "}"
  }

  /// The query in `bytes`, or `nil` when they are not JSON of the form ``write(_:)`` writes or
  /// carry a whole layout.
  package static func read(_ bytes: UnsafeRawBufferPointer) -> WireQuery? {
    var reader = WireJSON.Reader(bytes: bytes)
    do {
      let query = try query(&reader)
      try reader.end()
      return query
    } catch {
      return nil
    }
  }

  /// A query's object, without a whole layout.
  static func query(_ reader: inout WireJSON.Reader) throws -> WireQuery {
    var entity: String?
    var query = WireQuery(Query(entity: ""))
    var seen = Set<String>()
    try reader.object { reader, key in
      guard seen.insert(key).inserted else { throw WireJSON.Unreadable() }
      if key == "entity" {
        entity = try reader.string()
        return
      }
      if reader.consume("null") { return }
      switch key {
      case "filter": query.filter = WireFilter(try filter(&reader, depth: 1))
      case "sort":
        query.sort = try reader.array { reader in
          var field: String?
          var ascending = true
          try reader.object { reader, key in
            switch key {
            case "field" where field == nil: field = try reader.string()
            case "ascending": ascending = try reader.bool()
            default: throw WireJSON.Unreadable()
            }
          }
          guard let field else { throw WireJSON.Unreadable() }
          return WireSort(Sort(field, ascending: ascending))
        }
      case "limit": query.limit = try integer(&reader)
      case "offset": query.offset = try integer(&reader)
      case "layoutDigest": query.layoutDigest = try reader.string()
      case "after": query.after = try cursor(&reader)
      case "select": query.select = try reader.array { try $0.string() }
      default: throw WireJSON.Unreadable()
      }
    }
    guard let entity else { throw WireJSON.Unreadable() }
    query.entity = entity
    return query
  }

  /// A cursor's object, `{"values":[…]}`.
  static func cursor(_ reader: inout WireJSON.Reader) throws -> WireCursor {
    var values: [Value]?
    try reader.object { reader, key in
      guard key == "values", values == nil else { throw WireJSON.Unreadable() }
      values = try reader.values()
    }
    guard let values else { throw WireJSON.Unreadable() }
    return WireCursor(values: values)
  }

  static func integer(_ reader: inout WireJSON.Reader) throws -> Int {
    guard let number = Int(exactly: try reader.integer()) else { throw WireJSON.Unreadable() }
    return number
  }

  /// A filter in ``WireFilter``'s form: one key naming its kind.
  package static func append(_ filter: Filter, to text: inout JSONText) throws {
    /// `{"kind":{"field":…` and then `,"key":"string"` members.
    func open(_ kind: String, field: String) {
      text += "{"
      text.appendQuoted(kind)
      text += #":{"field":"#
      text.appendQuoted(field)
    }
    func member(_ key: String, _ string: String) {
      WireJSON.appendKey(key, to: &text)
      text.appendQuoted(string)
    }
    switch filter {
    case .all:
      text += #"{"all":true}"#
    case .compare(let field, let op, let value):
      open("compare", field: field)
      member("op", op.rawValue)
      text += #","value":"#
      try WireJSON.append(value, to: &text)
      text += "}}"
    case .isIn(let field, let values):
      open("in", field: field)
      text += #","values":"#
      try WireJSON.append(values, to: &text)
      text += "}}"
    case .string(let field, let match, let pattern):
      open("string", field: field)
      member("match", match.rawValue)
      member("pattern", pattern)
      text += "}}"
    case .compareFields(let field, let op, let other):
      open("compareFields", field: field)
      member("op", op.rawValue)
      member("other", other)
      text += "}}"
    case .matches(let field, let query):
      open("matches", field: field)
      member("query", query)
      text += "}}"
    case .and(let parts), .or(let parts):
      if case .and = filter { text += #"{"and":["# } else { text += #"{"or":["# }
      for (index, part) in parts.enumerated() {
        if index > 0 { text += "," }
        try append(part, to: &text)
      }
      text += "]}"
    case .not(let inner):
      text += #"{"not":"#
      try append(inner, to: &text)
      text += "}"
    }
  }

  /// A filter in ``WireFilter``'s form, nested at most ``WireFilter/hardDepthLimit`` deep (a
  /// deeper one is left to `JSONDecoder`, which refuses it in words).
  static func filter(_ reader: inout WireJSON.Reader, depth: Int) throws -> Filter {
    guard depth <= WireFilter.hardDepthLimit else { throw WireJSON.Unreadable() }
    var result: Filter?
    try reader.object { reader, kind in
      guard result == nil else { throw WireJSON.Unreadable() }
      switch kind {
      case "all":
        guard try reader.bool() else { throw WireJSON.Unreadable() }
        result = .all
      case "and": result = .and(try reader.array { try filter(&$0, depth: depth + 1) })
      case "or": result = .or(try reader.array { try filter(&$0, depth: depth + 1) })
      case "not": result = .not(try filter(&reader, depth: depth + 1))
      default: result = try leaf(kind, &reader)
      }
    }
    guard let result else { throw WireJSON.Unreadable() }
    return result
  }

  /// A filter of one field: its members, by name, in any order.
  private static func leaf(_ kind: String, _ reader: inout WireJSON.Reader) throws -> Filter {
    var strings: [String: String] = [:]
    var value: Value?
    var values: [Value]?
    try reader.object { reader, key in
      switch key {
      case "value" where value == nil: value = try reader.value()
      case "values" where values == nil: values = try reader.values()
      case "field", "op", "match", "pattern", "other", "query":
        guard strings[key] == nil else { throw WireJSON.Unreadable() }
        strings[key] = try reader.string()
      default: throw WireJSON.Unreadable()
      }
    }
    func string(_ key: String) throws -> String {
      guard let string = strings[key] else { throw WireJSON.Unreadable() }
      return string
    }
    let field = try string("field")
    let filter: Filter
    // How many members the kind has.
    let used: Int
    switch kind {
    case "compare":
      guard let op = ComparisonOperator(rawValue: try string("op")), let value else {
        throw WireJSON.Unreadable()
      }
      (filter, used) = (.compare(field: field, op: op, value: value), 3)
    case "in":
      guard let values else { throw WireJSON.Unreadable() }
      (filter, used) = (.isIn(field, values), 2)
    case "string":
      guard let match = StringMatch(rawValue: try string("match")) else { throw WireJSON.Unreadable() }
      (filter, used) = (.string(field: field, match: match, pattern: try string("pattern")), 3)
    case "compareFields":
      guard let op = ComparisonOperator(rawValue: try string("op")) else { throw WireJSON.Unreadable() }
      (filter, used) = (.compareFields(field: field, op: op, other: try string("other")), 3)
    case "matches":
      (filter, used) = (.matches(field: field, query: try string("query")), 2)
    default: throw WireJSON.Unreadable()
    }
    // A member the kind does not have: `Codable` would ignore it; this reader leaves it to
    // `JSONDecoder`.
    let members = strings.count + (value == nil ? 0 : 1) + (values == nil ? 0 : 1)
    guard members == used else { throw WireJSON.Unreadable() }
    return filter
  }
}
