@_spi(Backend) import Coffer

/// Readable text for the steps of a differential run, so a failure can be replayed by hand.
enum DifferentialRendering {
  static func step(_ step: DifferentialStep, _ schemas: [String: EntitySchema]) -> String {
    switch step {
    case .prepare(let list): return "prepare " + list.map(schema).joined(separator: "; ")
    case .apply(let operations):
      return "apply [" + operations.map { operation($0, schemas) }.joined(separator: "; ") + "]"
    case .bulkInsert(let entity, let rows):
      let shown = rows.prefix(6).map { row($0, schemas[entity]) }.joined(separator: ", ")
      return "bulk insert \(rows.count) into \(name(entity)) [\(shown)\(rows.count > 6 ? ", …" : "")]"
    case .fetch(let query): return "fetch " + self.query(query)
    case .count(let query): return "count " + self.query(query)
    case .aggregate(let aggregation):
      let field = aggregation.function.field.map { " of \(name($0))" } ?? ""
      let groups = aggregation.groupBy.map { " grouped by \(name($0))" } ?? ""
      return "aggregate \(aggregation.function.name)\(field)\(groups) over " + query(aggregation.query)
    case .get(let entity, let ids):
      return "get \(name(entity)) ids [\(ids.map(value).joined(separator: ", "))]"
    case .reopen: return "close and reopen"
    case .race(let evolved, let batch):
      return "race prepare \(schema(evolved)) with apply ["
        + batch.map { operation($0, schemas) }.joined(separator: "; ") + "]"
    }
  }

  /// A schema as `"name"{id: int, "f": string?, "g": int = 5; unique("f"), index("g")}`.
  static func schema(_ schema: EntitySchema) -> String {
    let fields = schema.fields.map { field in
      var text = "\(name(field.name)): \(field.kind)\(field.isOptional ? "?" : "")"
      if let fallback = field.defaultValue { text += " = \(value(fallback))" }
      if field.name == schema.idField.name { text += " (id)" }
      return text
    }
    let indexes = schema.indexes.map {
      ($0.isUnique ? "unique(" : "index(") + $0.fields.map(name).joined(separator: ", ") + ")"
    }
    return name(schema.name) + "{" + fields.joined(separator: ", ")
      + (indexes.isEmpty ? "" : "; " + indexes.joined(separator: ", ")) + "}"
  }

  /// A name, quoted and escaped like a string.
  static func name(_ name: String) -> String { value(.string(name)) }

  static func operation(_ operation: ChangeSet.Operation, _ schemas: [String: EntitySchema]) -> String {
    switch operation {
    case .insert(let entity, let row): "insert \(name(entity)) \(self.row(row, schemas[entity]))"
    case .update(let entity, let row): "update \(name(entity)) \(self.row(row, schemas[entity]))"
    case .upsert(let entity, let row): "upsert \(name(entity)) \(self.row(row, schemas[entity]))"
    case .insertMany(let entity, let rows): "insertMany \(name(entity)) (\(rows.count) rows)"
    case .delete(let entity, let id): "delete \(name(entity)) id \(value(id))"
    case .deleteMatching(let entity, let filter):
      "deleteMatching \(name(entity)) where \(self.filter(filter))"
    case .updateMatching(let entity, let filter, let changes):
      "updateMatching \(name(entity)) where \(self.filter(filter)) set "
        + changes.map { change in
          switch change.change {
          case .set(let value): "\(name(change.field)) = \(self.value(value))"
          case .add(let amount): "\(name(change.field)) += \(self.value(amount))"
          }
        }.joined(separator: ", ")
    }
  }

  static func query(_ query: Query) -> String {
    var text = "\(name(query.entity)) where \(filter(query.filter))"
    if !query.sort.isEmpty {
      text +=
        " sort "
        + query.sort.map { "\(name($0.field)) \($0.ascending ? "asc" : "desc")" }.joined(separator: ", ")
    }
    if let limit = query.limit { text += " limit \(limit)" }
    if query.offset != 0 { text += " offset \(query.offset)" }
    return text
  }

  static func filter(_ filter: Filter) -> String {
    switch filter {
    case .all: return "all"
    case .compare(let field, let op, let operand): return "\(name(field)) \(op.rawValue) \(value(operand))"
    case .isIn(let field, let values):
      return "\(name(field)) in [\(values.map(value).joined(separator: ", "))]"
    case .string(let field, let match, let pattern):
      return "\(name(field)) \(match.rawValue) \(value(.string(pattern)))"
    case .compareFields(let field, let op, let other):
      return "\(name(field)) \(op.rawValue) field \(name(other))"
    case .matches(let field, let query):
      return "\(name(field)) matches \(value(.string(query)))"
    case .and(let parts):
      return parts.isEmpty ? "and()" : "(" + parts.map(self.filter).joined(separator: " and ") + ")"
    case .or(let parts):
      return parts.isEmpty ? "or()" : "(" + parts.map(self.filter).joined(separator: " or ") + ")"
    case .not(let inner): return "not(\(self.filter(inner)))"
    }
  }

  static func row(_ row: Row, _ schema: EntitySchema?) -> String {
    let parts = row.values.enumerated().map { position, item in
      let label =
        schema.flatMap { position < $0.fields.count ? name($0.fields[position].name) : nil } ?? "#\(position)"
      return "\(label): \(value(item))"
    }
    return "(" + parts.joined(separator: ", ") + ")"
  }

  /// A value with strings escaped scalar by scalar, so that "é" and "e\u{301}" look different.
  static func value(_ value: Value) -> String {
    switch value {
    case .string(let text):
      let scalars = Array(text.unicodeScalars)
      let escaped = scalars.prefix(40).map { scalar in
        scalar.isASCII && scalar.value >= 0x20 && scalar != "\"" && scalar != "\\"
          ? String(scalar) : "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      }
      let more = scalars.count > 40 ? "…(\(scalars.count) scalars, \(text.utf8.count) bytes)" : ""
      return "\"" + escaped.joined() + more + "\""
    case .bytes(let data):
      return "bytes[" + data.prefix(16).map { String($0) }.joined(separator: ",")
        + (data.count > 16 ? ",…(\(data.count) bytes)" : "") + "]"
    case .document(let data):
      return "document(" + self.value(.string(String(decoding: data, as: UTF8.self))) + ")"
    case .date(let date): return "date(\(Value.microseconds(since1970: date))µs)"
    case .double(let double): return double == 0 && double.sign == .minus ? "-0.0" : "\(double)"
    default: return value.description
    }
  }
}
