import Foundation

extension MigrationPlan {
  /// A plan of built-in steps read from JSON — what `coffer migrate --plan FILE` reads:
  ///
  /// ```json
  /// { "steps": [
  ///   { "name": "v2-rename", "renameField": { "entity": "Message", "from": "body", "to": "text" } },
  ///   { "name": "v2-entity", "renameEntity": { "from": "Msg", "to": "Message" } },
  ///   { "name": "v2-kind", "changeKind": { "entity": "Message", "field": "score", "to": "double" } },
  ///   { "name": "v2-flag", "addField": { "entity": "Message", "field": "pinned", "kind": "bool", "default": false } },
  ///   { "name": "v2-drop", "removeField": { "entity": "Message", "field": "legacy" } },
  ///   { "name": "v2-gone", "removeEntity": { "entity": "Draft" } },
  ///   { "name": "v2-index", "addIndex": { "entity": "Message", "fields": ["threadID", "date"], "unique": false } },
  ///   { "name": "v2-search", "addIndex": { "entity": "Message", "fields": ["body"], "text": true } },
  ///   { "name": "v2-unindex", "dropIndex": { "entity": "Message", "fields": ["legacy"] } }
  /// ] }
  /// ```
  ///
  /// `changeKind` converts with the built-in conversion for the stored and new kinds (see
  /// ``FieldConversion/builtIn(from:to:)``) and takes `"optional": true|false` to change
  /// whether the field may be null. `addField` takes `"optional"` and a `"default"` (a JSON
  /// number, string or Boolean of the field's kind), which every stored row gets; a required
  /// field needs one. Custom steps and computed fields need Swift: write them in the app.
  ///
  /// - Throws: ``CofferError/Code/invalidInput`` naming the step and what is wrong with it.
  public init(json data: Data) throws {
    let file: PlanFile
    do {
      file = try JSONDecoder().decode(PlanFile.self, from: data)
    } catch let error as DecodingError {
      throw CofferError(
        .invalidInput,
        "The migration plan is not valid: \(Self.describe(error)). See MigrationPlan(json:) for the format.")
    }
    self.init(
      try file.steps.enumerated().map { position, step in try step.migrationStep(position: position) })
  }

  private static func describe(_ error: DecodingError) -> String {
    func path(_ context: DecodingError.Context) -> String {
      let path = context.codingPath.map { $0.intValue.map { "step \($0)" } ?? $0.stringValue }
      return path.isEmpty ? "the top level" : path.joined(separator: ", ")
    }
    switch error {
    case .keyNotFound(let key, let context): return "\(path(context)) lacks '\(key.stringValue)'"
    case .typeMismatch(_, let context), .valueNotFound(_, let context):
      return "\(path(context)) has the wrong type"
    case .dataCorrupted(let context): return "\(path(context)) is not JSON this format reads"
    @unknown default: return "it cannot be read"
    }
  }
}

/// The JSON form of a plan.
private struct PlanFile: Decodable {
  var steps: [StepEntry]
}

/// One step in JSON: its name and exactly one kind of step.
private struct StepEntry: Decodable {
  struct Names: Decodable { var entity: String?, from: String?, to: String?, field: String? }
  struct Kind: Decodable { var entity: String, field: String, to: FieldKind, optional: Bool? }
  struct NewField: Decodable {
    var entity: String, field: String, kind: FieldKind, optional: Bool?
    var `default`: JSONScalar?
  }
  struct IndexEntry: Decodable { var entity: String, fields: [String], unique: Bool?, text: Bool? }

  var name: String
  var renameEntity: Names?
  var renameField: Names?
  var changeKind: Kind?
  var addField: NewField?
  var removeField: Names?
  var removeEntity: Names?
  var addIndex: IndexEntry?
  var dropIndex: IndexEntry?

  func migrationStep(position: Int) throws -> MigrationStep {
    func invalid(_ what: String) -> CofferError {
      CofferError(
        .invalidInput,
        "Migration step \(position) ('\(name)') \(what). See MigrationPlan(json:) for the format.")
    }
    func required(_ value: String?, _ key: String) throws -> String {
      guard let value, !value.isEmpty else { throw invalid("lacks '\(key)'") }
      return value
    }
    let kinds = [
      renameEntity != nil, renameField != nil, changeKind != nil, addField != nil, removeField != nil,
      removeEntity != nil, addIndex != nil, dropIndex != nil,
    ].count { $0 }
    guard kinds == 1 else {
      throw invalid(
        kinds == 0
          ? "names no kind of step (renameEntity, renameField, changeKind, addField, removeField, removeEntity, "
            + "addIndex or dropIndex)" : "names \(kinds) kinds of step; give each its own step")
    }
    if let names = renameEntity {
      return .renameEntity(name, from: try required(names.from, "from"), to: try required(names.to, "to"))
    }
    if let names = renameField {
      return .renameField(
        name, entity: try required(names.entity, "entity"), from: try required(names.from, "from"),
        to: try required(names.to, "to"))
    }
    if let kind = changeKind {
      return .changeKind(name, entity: kind.entity, field: kind.field, to: kind.to, isOptional: kind.optional)
    }
    if let new = addField {
      var defaultValue: Value?
      if let scalar = new.default {
        guard let value = scalar.value(of: new.kind) else {
          throw invalid("has a default that is not a \(new.kind)")
        }
        defaultValue = value
      }
      guard new.optional == true || defaultValue != nil else {
        throw invalid("adds a required field without a default; give it one, or make it optional")
      }
      return .addField(
        name, entity: new.entity,
        Field(new.field, new.kind, isOptional: new.optional ?? false, default: defaultValue))
    }
    if let names = removeField {
      return .removeField(
        name, entity: try required(names.entity, "entity"), field: try required(names.field, "field"))
    }
    if let names = removeEntity { return .removeEntity(name, entity: try required(names.entity, "entity")) }
    if let index = addIndex {
      guard !index.fields.isEmpty else { throw invalid("has an index of no fields") }
      if index.text == true {
        guard index.fields.count == 1, index.unique != true else {
          throw invalid("has a text index that is not on exactly one field, or is unique")
        }
        return .addIndex(name, entity: index.entity, .text(on: index.fields[0]))
      }
      return .addIndex(name, entity: index.entity, Index(index.fields, isUnique: index.unique ?? false))
    }
    guard let index = dropIndex else { throw invalid("names no kind of step") }
    return .dropIndex(name, entity: index.entity, fields: index.fields)
  }
}

/// A JSON number, string or Boolean.
private enum JSONScalar: Decodable {
  case integer(Int64)
  case number(Double)
  case text(String)
  case flag(Bool)

  init(from decoder: any Decoder) throws {
    let container = try decoder.singleValueContainer()
    if let flag = try? container.decode(Bool.self) {
      self = .flag(flag)
    } else if let integer = try? container.decode(Int64.self) {
      self = .integer(integer)
    } else if let number = try? container.decode(Double.self) {
      self = .number(number)
    } else {
      self = .text(try container.decode(String.self))
    }
  }

  /// The value of a field of `kind` this scalar stands for, or `nil`.
  func value(of kind: FieldKind) -> Value? {
    switch (kind, self) {
    case (.int, .integer(let integer)): .int(integer)
    case (.double, .integer(let integer)): Double(exactly: integer).map(Value.double)
    case (.double, .number(let number)): .double(number)
    case (.string, .text(let text)): .string(text)
    case (.bool, .flag(let flag)): .bool(flag)
    case (.uuid, .text(let text)): UUID(uuidString: text).map(Value.uuid)
    default: nil
    }
  }
}
