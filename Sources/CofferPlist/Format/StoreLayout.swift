@_spi(Backend) import Coffer
import Foundation

/// The layout of a Coffer property-list store (specified in Docs/Formats.md):
///
/// ```
/// root dictionary
///   CofferStore: { format: "coffer-plist", version: 1, migrations?: [{ name, position, appliedAt, rowsTouched }],
///                  changes?: { trimmedThrough, last, batches: [{ sequence, committedAt, payload }] } }
///   schemas:     { ENTITY: { idField, fields: [{ name, kind, optional, default? }], indexes: [{ fields, unique }] } }
///   entities:    { ENTITY: [ { FIELD: value, … }, … ] }      null fields are left out
/// ```
///
/// Field values by kind: bool → boolean, int → integer, double → real, string → string (or, in
/// XML, data holding UTF-8 when the text has characters XML cannot carry), bytes → data,
/// date → integer microseconds since 1970, uuid → string, document → string of JSON.
enum StoreLayout {
  static let marker = "CofferStore"
  static let formatName = "coffer-plist"
  static let version: Int64 = 1

  /// The `CofferStore` header; the migration steps run on the store, when there are any, as
  /// `migrations: [{ name, position, appliedAt (milliseconds since 1970), rowsTouched }]`; the
  /// change feed, when the store records one, as `changes` (``plist(_:)-(RecordedChangeLog)``).
  static func header(migrations: [MigrationRecord] = [], feed: RecordedChangeLog? = nil) -> PlistValue {
    var entries: [(key: String, value: PlistValue)] = [
      ("format", .string(formatName)), ("version", .integer(version)),
    ]
    if !migrations.isEmpty {
      entries.append(
        (
          "migrations",
          .array(
            migrations.map { record in
              .dict([
                ("name", .string(record.name)), ("position", .integer(Int64(record.position))),
                ("appliedAt", .integer(milliseconds(since1970: record.appliedAt))),
                ("rowsTouched", .integer(Int64(record.rowsTouched))),
              ])
            })
        ))
    }
    if let feed, feed.recording { entries.append(("changes", plist(feed))) }
    return .dict(entries)
  }

  /// The migration steps a `CofferStore` header records; none when it has no `migrations`.
  static func migrations(in header: PlistValue?) throws -> [MigrationRecord] {
    guard let list = header?["migrations"] else { return [] }
    guard case .array(let items) = list else { throw LayoutError.layout("'migrations' is not an array") }
    return try items.map { item in
      guard let name = text(item["name"]), case .integer(let position)? = item["position"],
        case .integer(let milliseconds)? = item["appliedAt"], case .integer(let rows)? = item["rowsTouched"]
      else {
        throw LayoutError.layout(
          "a record in 'migrations' lacks its name, position, appliedAt or rowsTouched")
      }
      return MigrationRecord(
        name: name, position: Int(position),
        appliedAt: Date(timeIntervalSince1970: Double(milliseconds) / 1000),
        rowsTouched: Int(rows))
    }
  }

  /// A date as whole milliseconds since 1970, held to the range of `Int64` (a date read from
  /// a file can lie beyond it).
  static func milliseconds(since1970 date: Date) -> Int64 {
    let milliseconds = (date.timeIntervalSince1970 * 1000).rounded()
    // 2^63, the first Double above Int64.max; -2^63 is Int64.min itself.
    if milliseconds >= 9_223_372_036_854_775_808.0 { return Int64.max }
    if milliseconds <= -9_223_372_036_854_775_808.0 { return Int64.min }
    return milliseconds.isNaN ? 0 : Int64(milliseconds)
  }

  /// A name in a header or schema: a string, or the `<data>` holding its UTF-8 that the XML
  /// writer puts in its place for text XML cannot carry (a control character).
  static func text(_ value: PlistValue?) -> String? {
    switch value {
    case .string(let text)?: text
    case .data(let data)?: String(validating: data, as: UTF8.self)
    default: nil
    }
  }

  // MARK: Values

  static func plist(_ value: Value) -> PlistValue? {
    switch value {
    case .null: nil
    case .bool(let flag): .bool(flag)
    case .int(let number): .integer(number)
    case .double(let number): .real(number)
    case .string(let text): .string(text)
    case .bytes(let data): .data(data)
    case .date(let date): .integer(Value.microseconds(since1970: date))
    case .uuid(let uuid): .string(uuid.uuidString)
    case .document(let data): .string(String(decoding: data, as: UTF8.self))
    }
  }

  /// The stored value of a field, accepting the forms other plist tools are likely to write
  /// (an integer for a double, a `<date>` for a date, data for a string).
  static func value(_ plist: PlistValue, kind: FieldKind) -> Value? {
    switch (kind, plist) {
    case (.bool, .bool(let flag)): return .bool(flag)
    case (.int, .integer(let number)): return .int(number)
    case (.double, .real(let number)): return number.isNaN ? nil : .double(number)
    case (.double, .integer(let number)): return .double(Double(number))
    case (.string, .string(let text)): return .string(text)
    case (.string, .data(let data)): return String(validating: data, as: UTF8.self).map(Value.string)
    case (.bytes, .data(let data)): return .bytes(data)
    case (.date, .integer(let micros)): return .date(Value.date(microsecondsSince1970: micros))
    // A binary plist date is a double, which may be NaN: no instant, and no microsecond count.
    case (.date, .date(let date)):
      return date.timeIntervalSince1970.isNaN ? nil : .date(Value.normalized(date))
    case (.uuid, .string(let text)): return UUID(uuidString: text).map(Value.uuid)
    case (.document, .string(let text)): return .document(Data(text.utf8))
    // A document is JSON, so UTF-8: it is written back as a string, which other bytes would not
    // survive.
    case (.document, .data(let data)):
      return String(validating: data, as: UTF8.self).map { _ in .document(data) }
    default: return nil
    }
  }

  // MARK: Schemas

  static func plist(_ schema: EntitySchema) -> PlistValue {
    let fields: [PlistValue] = schema.fields.map { field in
      var entries: [(key: String, value: PlistValue)] = [
        ("name", .string(field.name)), ("kind", .string(field.kind.rawValue)),
        ("optional", .bool(field.isOptional)),
      ]
      if let value = field.defaultValue, let stored = plist(value) { entries.append(("default", stored)) }
      return .dict(entries)
    }
    let indexes: [PlistValue] = schema.indexes.map { index in
      var entries: [(key: String, value: PlistValue)] = [
        ("fields", .array(index.fields.map(PlistValue.string))), ("unique", .bool(index.isUnique)),
      ]
      // Written only for a text index, so an ordinary index is stored as before.
      if index.isText { entries.append(("kind", .string("text"))) }
      return .dict(entries)
    }
    var entries: [(key: String, value: PlistValue)] = [
      ("idField", .string(schema.idField.name)), ("fields", .array(fields)), ("indexes", .array(indexes)),
    ]
    // Written only when there are any, so a schema without references is stored as before.
    if !schema.references.isEmpty {
      let references: [PlistValue] = schema.references.map { reference in
        .dict([
          ("field", .string(reference.field)), ("entity", .string(reference.entity)),
          ("onDelete", .string(reference.onDelete.rawValue)),
        ])
      }
      entries.append(("references", .array(references)))
    }
    return .dict(entries)
  }

  static func schema(named name: String, from plist: PlistValue) throws -> EntitySchema {
    func bad(_ what: String) -> LayoutError { LayoutError("the schema of '\(name)' \(what)") }
    guard let idField = text(plist["idField"]) else { throw bad("has no idField string") }
    guard case .array(let fieldList)? = plist["fields"] else { throw bad("has no fields array") }
    var fields: [Field] = []
    for entry in fieldList {
      guard let fieldName = text(entry["name"]), case .string(let kindName)? = entry["kind"],
        let kind = FieldKind(rawValue: kindName)
      else { throw bad("has a field without a valid name and kind") }
      var optional = false
      if case .bool(let flag)? = entry["optional"] { optional = flag }
      let defaultValue = entry["default"].flatMap { value($0, kind: kind) }
      fields.append(Field(fieldName, kind, isOptional: optional, default: defaultValue))
    }
    var indexes: [Index] = []
    if case .array(let indexList)? = plist["indexes"] {
      for entry in indexList {
        guard case .array(let names)? = entry["fields"] else { throw bad("has an index without fields") }
        let fieldNames = try names.map { item -> String in
          guard let name = text(item) else { throw bad("has an index naming a non-string field") }
          return name
        }
        var unique = false
        if case .bool(let flag)? = entry["unique"] { unique = flag }
        switch entry["kind"] {
        case nil: indexes.append(Index(fieldNames, isUnique: unique))
        case .string("text")? where fieldNames.count == 1 && !unique: indexes.append(.text(on: fieldNames[0]))
        default: throw bad("has an index of a kind this version of Coffer does not know")
        }
      }
    }
    var references: [EntityReference] = []
    if case .array(let referenceList)? = plist["references"] {
      for entry in referenceList {
        guard let field = text(entry["field"]), let entity = text(entry["entity"]),
          case .string(let ruleName)? = entry["onDelete"], let rule = DeleteRule(rawValue: ruleName)
        else { throw bad("has a reference without a field, an entity and a known delete rule") }
        references.append(EntityReference(field: field, entity: entity, onDelete: rule))
      }
    }
    do {
      return try EntitySchema(
        name: name, fields: fields, idField: idField, indexes: indexes, references: references)
    } catch let error as CofferError {
      throw LayoutError("the schema of '\(name)' is not valid: \(error.message)")
    }
  }

  // MARK: Rows

  static func row(_ plist: PlistValue, schema: EntitySchema, index: Int) throws -> Row {
    guard case .dict(let entries) = plist else {
      throw LayoutError("row \(index) of '\(schema.name)' is a \(plist.typeName), not a dictionary")
    }
    var values = Array(repeating: Value.null, count: schema.fields.count)
    for entry in entries {
      guard let position = schema.position(of: entry.key) else { continue }
      let field = schema.fields[position]
      guard let value = value(entry.value, kind: field.kind) else {
        throw LayoutError(
          "row \(index) of '\(schema.name)' has \(entry.value.typeName) for field '\(field.name)', which holds \(field.kind)"
        )
      }
      values[position] = value
    }
    try fillRequired(&values, schema: schema, index: index)
    return Row(values)
  }

  /// Gives required fields a row left out their default, or fails naming the row and field.
  static func fillRequired(_ values: inout [Value], schema: EntitySchema, index: Int) throws {
    for (position, field) in schema.fields.enumerated() where values[position].isNull && !field.isOptional {
      guard let fallback = field.defaultValue else {
        throw LayoutError("row \(index) of '\(schema.name)' has no value for required field '\(field.name)'")
      }
      values[position] = fallback
    }
  }
}

/// A store file whose content does not follow the layout; the message says where.
struct LayoutError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
