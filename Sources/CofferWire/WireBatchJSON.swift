@_spi(Backend) import Coffer
import Foundation

/// ``WireBatch`` in JSON written and read by hand: a bulk insert through a `coffer+http://` store
/// is one batch of every row, and `JSONEncoder` and `JSONDecoder` spent several times what the
/// served store spent inserting them.
///
/// The form is exactly the one `Codable` gives (the Formats article's), members left out when they
/// are `nil`. ``read(_:)`` takes any JSON of that form (white space, keys in any order, `null` for
/// a member left out, escapes) except a batch carrying whole ``WireBatch/layouts`` or a
/// precondition whose query carries a whole layout, and answers `nil` for anything else, for the
/// caller to hand to `JSONDecoder`, whose error says what is wrong.
package enum WireBatchJSON {
  /// The batch as JSON.
  ///
  /// - Throws: `EncodingError.invalidValue` for a NaN, which no store holds; a row source's error.
  package static func write(_ batch: WireBatch) throws -> [UInt8] {
    var text = JSONText(capacity: 256 + batch.operations.count * 160)
    text += #"{"operations":["#
    for (index, operation) in batch.operations.enumerated() {
      if index > 0 { text += "," }
      try append(operation.operation, to: &text)
    }
    text += "]"
    if let layouts = batch.layouts {
      // Whole schemas are rare on the wire (named by digest once the server has them), so they
      // keep `Codable`'s writing.
      // Sorted keys: one batch is one text, which the server's idempotency digest relies on.
      WireJSON.appendKey("layouts", to: &text)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys]
      text.bytes.append(contentsOf: try encoder.encode(layouts))
    }
    if let digests = batch.layoutDigests {
      WireJSON.appendKey("layoutDigests", to: &text)
      text += "{"
      for (index, (entity, digest)) in digests.sorted(by: { $0.key < $1.key }).enumerated() {
        WireJSON.appendKey(entity, first: index == 0, to: &text)
        text.appendQuoted(digest)
      }
      text += "}"
    }
    if let preconditions = batch.preconditions {
      WireJSON.appendKey("preconditions", to: &text)
      text += "["
      for (index, precondition) in preconditions.enumerated() {
        if index > 0 { text += "," }
        text += #"{"query":"#
        try WireQueryJSON.append(precondition.query, to: &text)
        if let rows = precondition.rows {
          text += #","rows":["#
          for (index, row) in rows.enumerated() {
            if index > 0 { text += "," }
            try WireJSON.append(row, to: &text)
          }
          text += "]"
        }
        if let count = precondition.count { text += #","count":"# + String(count) }
        text += "}"
      }
      text += "]"
    }
    if let references = batch.references {
      WireJSON.appendKey("references", to: &text)
      text.appendQuoted(references.rawValue)
    }
    text += "}"
    return text.bytes
  }

  /// An operation, one key naming its kind.
  private static func append(_ operation: ChangeSet.Operation, to text: inout JSONText) throws {
    func open(_ kind: String, _ entity: String) {
      text += "{"
      text.appendQuoted(kind)
      text += #":{"entity":"#
      text.appendQuoted(entity)
    }
    switch operation {
    case .insert(let entity, let row), .update(let entity, let row), .upsert(let entity, let row):
      let kind =
        switch operation {
        case .insert: "insert"
        case .update: "update"
        default: "upsert"
        }
      open(kind, entity)
      text += #","row":"#
      try WireJSON.append(row.values, to: &text)
    case .insertMany(let entity, let source):
      open("insertMany", entity)
      text += #","rows":["#
      for position in 0..<source.count {
        if position > 0 { text += "," }
        try WireJSON.append(try source.row(at: position).values, to: &text)
      }
      text += "]"
    case .delete(let entity, let id):
      open("delete", entity)
      text += #","id":"#
      try WireJSON.append(id, to: &text)
    case .deleteMatching(let entity, let filter):
      open("deleteMatching", entity)
      text += #","filter":"#
      try WireQueryJSON.append(filter, to: &text)
    case .updateMatching(let entity, let filter, let changes):
      open("updateMatching", entity)
      text += #","filter":"#
      try WireQueryJSON.append(filter, to: &text)
      text += #","changes":["#
      for (index, change) in changes.enumerated() {
        if index > 0 { text += "," }
        text += #"{"field":"#
        text.appendQuoted(change.field)
        switch change.change {
        case .set(let value):
          text += #","set":"#
          try WireJSON.append(value, to: &text)
        case .add(let amount):
          text += #","add":"#
          try WireJSON.append(amount, to: &text)
        }
        text += "}"
      }
      text += "]"
    }
    text += "}}"
  }

  /// The batch in `bytes`, or `nil` when they are not JSON of the form ``write(_:)`` writes or carry
  /// a whole layout.
  package static func read(_ bytes: UnsafeRawBufferPointer) -> WireBatch? {
    var reader = WireJSON.Reader(bytes: bytes)
    var operations: [WireOperation]?
    var batch = WireBatch(ChangeSet())
    var seen = Set<String>()
    do {
      try reader.object { reader, key in
        guard seen.insert(key).inserted else { throw WireJSON.Unreadable() }
        if key == "operations" {
          operations = try reader.array { WireOperation(try operation(&$0)) }
          return
        }
        if reader.consume("null") { return }
        switch key {
        case "layoutDigests":
          var digests: [String: String] = [:]
          try reader.object { reader, entity in
            guard digests.updateValue(try reader.string(), forKey: entity) == nil else {
              throw WireJSON.Unreadable()
            }
          }
          batch.layoutDigests = digests
        case "preconditions": batch.preconditions = try reader.array { try precondition(&$0) }
        case "references":
          guard let references = WireReferences(rawValue: try reader.string()) else {
            throw WireJSON.Unreadable()
          }
          batch.references = references
        default: throw WireJSON.Unreadable()
        }
      }
      try reader.end()
    } catch {
      return nil
    }
    guard let operations else { return nil }
    batch.operations = operations
    return batch
  }

  private static func precondition(_ reader: inout WireJSON.Reader) throws -> WirePrecondition {
    var query: WireQuery?
    var rows: [[Value]]?
    var count: Int?
    var seen = Set<String>()
    try reader.object { reader, key in
      guard seen.insert(key).inserted else { throw WireJSON.Unreadable() }
      switch key {
      case "query": query = try WireQueryJSON.query(&reader)
      case "rows": rows = reader.consume("null") ? nil : try reader.array { try $0.values() }
      case "count": count = reader.consume("null") ? nil : try WireQueryJSON.integer(&reader)
      default: throw WireJSON.Unreadable()
      }
    }
    guard let query else { throw WireJSON.Unreadable() }
    return WirePrecondition(query: query, rows: rows, count: count)
  }

  private static func operation(_ reader: inout WireJSON.Reader) throws -> ChangeSet.Operation {
    var result: ChangeSet.Operation?
    try reader.object { reader, kind in
      guard result == nil else { throw WireJSON.Unreadable() }
      var entity: String?
      var values: [Value]?
      var rows: [Row]?
      var id: Value?
      var filter: Filter?
      var changes: [FieldUpdate]?
      var members = 0
      try reader.object { reader, key in
        members += 1
        switch key {
        case "entity" where entity == nil: entity = try reader.string()
        case "row" where values == nil: values = try reader.values()
        case "rows" where rows == nil: rows = try reader.array { Row(try $0.values()) }
        case "id" where id == nil: id = try reader.value()
        case "filter" where filter == nil: filter = try WireQueryJSON.filter(&reader, depth: 1)
        case "changes" where changes == nil: changes = try reader.array { try fieldUpdate(&$0) }
        default: throw WireJSON.Unreadable()
        }
      }
      guard let entity else { throw WireJSON.Unreadable() }
      switch (kind, values, rows, id, filter, changes) {
      case ("insert", let values?, nil, nil, nil, nil): result = .insert(entity: entity, row: Row(values))
      case ("update", let values?, nil, nil, nil, nil): result = .update(entity: entity, row: Row(values))
      case ("upsert", let values?, nil, nil, nil, nil): result = .upsert(entity: entity, row: Row(values))
      case ("insertMany", nil, let rows?, nil, nil, nil):
        result = .insertMany(entity: entity, rows: RowSource(rows))
      case ("delete", nil, nil, let id?, nil, nil): result = .delete(entity: entity, id: id)
      case ("deleteMatching", nil, nil, nil, let filter?, nil):
        result = .deleteMatching(entity: entity, filter: filter)
      case ("updateMatching", nil, nil, nil, let filter?, let changes?):
        result = .updateMatching(entity: entity, filter: filter, changes: changes)
      default: throw WireJSON.Unreadable()
      }
    }
    guard let result else { throw WireJSON.Unreadable() }
    return result
  }

  private static func fieldUpdate(_ reader: inout WireJSON.Reader) throws -> FieldUpdate {
    var field: String?
    var set: Value?
    var add: Value?
    try reader.object { reader, key in
      switch key {
      case "field" where field == nil: field = try reader.string()
      case "set" where set == nil && add == nil: set = try reader.value()
      case "add" where add == nil && set == nil: add = try reader.value()
      default: throw WireJSON.Unreadable()
      }
    }
    switch (field, set, add) {
    case (let field?, let value?, nil): return .set(field, to: value)
    case (let field?, nil, let amount?): return .add(field, amount)
    default: throw WireJSON.Unreadable()
    }
  }
}
