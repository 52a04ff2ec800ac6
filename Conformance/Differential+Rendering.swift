import Coffer

/// Readable text for the steps of a differential run, so a failure can be replayed by hand.
enum DifferentialRendering {
  static func step(_ step: DifferentialStep, _ schemas: [String: EntitySchema]) -> String {
    switch step {
    case .apply(let operations):
      return "apply [" + operations.map { operation($0, schemas) }.joined(separator: "; ") + "]"
    case .fetch(let query): return "fetch " + self.query(query)
    case .count(let query): return "count " + self.query(query)
    }
  }

  static func operation(_ operation: ChangeSet.Operation, _ schemas: [String: EntitySchema]) -> String {
    switch operation {
    case .insert(let entity, let row): "insert \(entity) \(self.row(row, schemas[entity]))"
    case .update(let entity, let row): "update \(entity) \(self.row(row, schemas[entity]))"
    case .upsert(let entity, let row): "upsert \(entity) \(self.row(row, schemas[entity]))"
    case .delete(let entity, let id): "delete \(entity) id \(value(id))"
    case .deleteMatching(let entity, let filter): "deleteMatching \(entity) where \(self.filter(filter))"
    }
  }

  static func query(_ query: Query) -> String {
    var text = "\(query.entity) where \(filter(query.filter))"
    if !query.sort.isEmpty {
      text +=
        " sort " + query.sort.map { "\($0.field) \($0.ascending ? "asc" : "desc")" }.joined(separator: ", ")
    }
    if let limit = query.limit { text += " limit \(limit)" }
    if query.offset != 0 { text += " offset \(query.offset)" }
    return text
  }

  static func filter(_ filter: Filter) -> String {
    switch filter {
    case .all: return "all"
    case .compare(let field, let op, let operand): return "\(field) \(op.rawValue) \(value(operand))"
    case .isIn(let field, let values): return "\(field) in [\(values.map(value).joined(separator: ", "))]"
    case .string(let field, let match, let pattern):
      return "\(field) \(match.rawValue) \(value(.string(pattern)))"
    case .and(let parts):
      return parts.isEmpty ? "and()" : "(" + parts.map(self.filter).joined(separator: " and ") + ")"
    case .or(let parts):
      return parts.isEmpty ? "or()" : "(" + parts.map(self.filter).joined(separator: " or ") + ")"
    case .not(let inner): return "not(\(self.filter(inner)))"
    }
  }

  static func row(_ row: Row, _ schema: EntitySchema?) -> String {
    let parts = row.values.enumerated().map { position, item in
      let name = schema.map { $0.fields[position].name } ?? "#\(position)"
      return "\(name): \(value(item))"
    }
    return "(" + parts.joined(separator: ", ") + ")"
  }

  /// A value with strings escaped scalar by scalar, so that "é" and "e\u{301}" look different.
  static func value(_ value: Value) -> String {
    switch value {
    case .string(let text):
      let escaped = text.unicodeScalars.map { scalar in
        scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\"
          ? String(scalar) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      }
      return "\"" + escaped.joined() + "\""
    case .bytes(let data): return "bytes[" + data.map { String($0) }.joined(separator: ",") + "]"
    case .date(let date): return "date(\(Value.microseconds(since1970: date))µs)"
    case .double(let double): return "\(double)"
    default: return value.description
    }
  }
}
