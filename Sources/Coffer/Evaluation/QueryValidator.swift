import Foundation

/// Checks queries and changes against a schema before they reach a backend, and puts their
/// values in the form backends rely on (integer literals for double fields become doubles,
/// dates are rounded to the microsecond).
///
/// ``Store`` runs every query and change through this, so a ``StorageBackend`` can assume its
/// input is valid.
@usableFromInline package enum QueryValidator {
  /// The most levels of ``Filter/and(_:)``, ``Filter/or(_:)`` and ``Filter/not(_:)`` a filter may
  /// nest, each counting one level; every backend answers filters up to this depth, and a deeper
  /// one is ``CofferError/Code/invalidQuery`` everywhere.
  package static let maximumFilterDepth = 100

  /// A batch operation with its row, id or filter checked and normalized like the others here.
  package static func validate(_ operation: ChangeSet.Operation, schema: EntitySchema) throws
    -> ChangeSet.Operation
  {
    switch operation {
    case .insert(let entity, let row): .insert(entity: entity, row: try validate(row, schema: schema))
    case .update(let entity, let row): .update(entity: entity, row: try validate(row, schema: schema))
    case .upsert(let entity, let row): .upsert(entity: entity, row: try validate(row, schema: schema))
    case .insertMany(let entity, let rows):
      // Each row is checked as the backend asks for it.
      .insertMany(entity: entity, rows: rows.map { try validate($0, schema: schema) })
    case .delete(let entity, let id): .delete(entity: entity, id: try validate(id: id, schema: schema))
    case .deleteMatching(let entity, let filter):
      .deleteMatching(entity: entity, filter: try validate(filter, schema: schema))
    case .updateMatching(let entity, let filter, let changes):
      .updateMatching(
        entity: entity, filter: try validate(filter, schema: schema),
        changes: try changes.map { try validate($0, schema: schema) })
    }
  }

  /// A field update, its value normalized, or an error naming what is wrong.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for an unknown field or the id field;
  ///   ``CofferError/Code/invalidValue`` for a value the field cannot hold, null in a required
  ///   field, or an addition to a field that is not a number or of another kind than the field.
  package static func validate(_ update: FieldUpdate, schema: EntitySchema) throws
    -> FieldUpdate
  {
    guard let position = schema.position(of: update.field) else { throw unknownField(update.field, schema) }
    let field = schema.fields[position]
    if position == schema.idPosition {
      throw invalid(
        "An update by query cannot change \(schema.name)'s id field '\(field.name)'. Insert a new value and delete the old one.",
        schema, field.name)
    }
    switch update.change {
    case .set(let value):
      if value.isNull, !field.isOptional {
        throw CofferError(
          .invalidValue, "\(schema.name).\(field.name) is required; it cannot be set to nil.",
          entity: schema.name, field: field.name)
      }
      var normalized = value
      if case .int(let int) = value, field.kind == .double { normalized = .double(Double(int)) }
      try KeySize.check(value, setting: position, schema: schema)
      return FieldUpdate(field.name, .set(try FieldValue.checked(normalized, for: schema, at: position)))
    case .add(let amount):
      var normalized = amount
      if case .int(let int) = amount, field.kind == .double { normalized = .double(Double(int)) }
      guard field.kind == .int || field.kind == .double, normalized.kind == field.kind else {
        throw CofferError(
          .invalidValue,
          "Only number fields can be added to, with a number of their kind: \(schema.name).\(field.name) "
            + "holds \(field.kind) values and the amount is \(amount.kind?.description ?? "null").",
          entity: schema.name, field: field.name)
      }
      return FieldUpdate(field.name, .add(try FieldValue.checked(normalized, for: schema, at: position)))
    }
  }

  /// A precondition with its query checked against the schema.
  package static func validate(_ precondition: ChangeSet.Precondition, schema: EntitySchema)
    throws
    -> ChangeSet.Precondition
  {
    var checked = precondition
    checked.query = try validate(precondition.query, schema: schema)
    if case .rows(let rows) = precondition.expectation {
      checked.expectation = .rows(try rows.map { try validate($0, schema: schema) })
    }
    return checked
  }

  /// The query, normalized, or an error naming what is wrong.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` for unknown fields, values of the wrong kind,
  ///   ordering comparisons with null or on documents, string matching on non-strings, negative
  ///   limits or offsets, filters nested deeper than ``maximumFilterDepth``.
  package static func validate(_ query: Query, schema: EntitySchema) throws -> Query {
    var query = query
    query.layout = schema
    query.filter = try validate(query.filter, schema: schema)
    for key in query.sort {
      guard let field = schema.field(named: key.field) else { throw unknownField(key.field, schema) }
      if key.byRelevance {
        guard query.filter.searches(field: key.field) else {
          throw invalid(
            "Cannot sort \(schema.name) by relevance to '\(field.name)': the query has no matches filter on it. "
              + "Add .matches on '\(field.name)' to the filter, or sort by the field's value.", schema,
            field.name)
        }
        continue
      }
      guard field.kind.isOrdered else {
        throw invalid(
          "Cannot sort \(schema.name) by '\(field.name)': documents have no order.", schema, field.name)
      }
    }
    if let limit = query.limit, limit < 0 {
      throw invalid("A query's limit must not be negative (got \(limit)).", schema, nil)
    }
    if query.offset < 0 {
      throw invalid("A query's offset must not be negative (got \(query.offset)).", schema, nil)
    }
    return query
  }

  /// The filter, normalized, or an error naming what is wrong. An and directly inside an and
  /// (an or inside an or) is flattened into it.
  ///
  /// - Throws: ``CofferError/Code/invalidQuery`` as for a query, and for a filter nesting more
  ///   than ``maximumFilterDepth`` levels of and/or/not.
  package static func validate(_ filter: Filter, schema: EntitySchema) throws -> Filter {
    try checkDepth(filter, schema: schema)
    return try normalize(filter, schema: schema)
  }

  /// Throws if the filter nests deeper than ``maximumFilterDepth``; never descends further.
  private static func checkDepth(_ filter: Filter, schema: EntitySchema, depth: Int = 0) throws {
    let parts: [Filter]
    switch filter {
    case .all, .compare, .isIn, .string, .compareFields, .matches: return
    case .and(let operands), .or(let operands): parts = operands
    case .not(let operand): parts = [operand]
    }
    guard depth < maximumFilterDepth else {
      throw invalid(
        "A filter nests and/or/not more than \(maximumFilterDepth) levels deep, the most every backend answers. "
          + "Join conditions of one kind in one and/or list, or split the query.", schema, nil)
    }
    for part in parts { try checkDepth(part, schema: schema, depth: depth + 1) }
  }

  private static func normalize(_ filter: Filter, schema: EntitySchema) throws -> Filter {
    switch filter {
    case .all: return .all
    case .compare(let name, let op, let value):
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      if value.isNull {
        guard op == .equal || op == .notEqual else {
          throw invalid(
            "'\(name) \(op.rawValue) null' never matches; compare with null only by == nil or != nil.",
            schema, name)
        }
        return filter
      }
      if op != .equal && op != .notEqual && !field.kind.isOrdered {
        throw invalid(
          "'\(schema.name).\(name)' is a document; documents compare only with == and !=.", schema, name)
      }
      return .compare(field: name, op: op, value: try normalize(value, for: field, schema))
    case .isIn(let name, let values):
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      return .isIn(name, try values.map { $0.isNull ? $0 : try normalize($0, for: field, schema) })
    case .string(let name, _, _):
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      guard field.kind == .string else {
        throw invalid(
          "'\(schema.name).\(name)' is a \(field.kind); contains, hasPrefix and hasSuffix need a string field.",
          schema, name)
      }
      return filter
    case .matches(let name, let text):
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      guard field.kind == .string else {
        throw invalid(
          "'\(schema.name).\(name)' is a \(field.kind); a full-text search (matches) needs a string field.",
          schema, name)
      }
      _ = try TextSearch.parse(text, field: name, schema: schema)
      return filter
    case .compareFields(let name, _, let otherName):
      guard let field = schema.field(named: name) else { throw unknownField(name, schema) }
      guard let other = schema.field(named: otherName) else { throw unknownField(otherName, schema) }
      guard field.kind == other.kind else {
        throw invalid(
          "'\(schema.name).\(name)' is a \(field.kind) and '\(otherName)' a \(other.kind); "
            + "compare two fields only when they have the same kind.", schema, name)
      }
      guard field.kind.isOrdered else {
        throw invalid(
          "'\(schema.name).\(name)' is a document; two fields compare only when they are not documents.",
          schema, name)
      }
      return filter
    case .and(let parts):
      return .and(
        try parts.flatMap { part -> [Filter] in
          let normalized = try normalize(part, schema: schema)
          if case .and(let inner) = normalized { return inner }
          return [normalized]
        })
    case .or(let parts):
      return .or(
        try parts.flatMap { part -> [Filter] in
          let normalized = try normalize(part, schema: schema)
          if case .or(let inner) = normalized { return inner }
          return [normalized]
        })
    case .not(let inner): return .not(try normalize(inner, schema: schema))
    }
  }

  /// The row, normalized, if it fits the schema.
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` for a wrong field count, a value of the wrong
  ///   kind, NaN, null in a required field, or an id or index entry longer than
  ///   ``KeySize/maximumBytes``.
  @usableFromInline package static func validate(_ row: consuming Row, schema: EntitySchema) throws -> Row {
    guard row.count == schema.fields.count else {
      throw CofferError(
        .invalidValue,
        "A \(schema.name) row has \(row.count) values but the entity has \(schema.fields.count) fields.",
        entity: schema.name)
    }
    // Only dates change (rounded to the microsecond); every other value is checked where it
    // lies, so a row with no date is returned without being copied.
    for position in 0..<row.count {
      if let normalized = try FieldValue.check(row.values[position], for: schema, at: position) {
        row.values[position] = normalized
      } else if row.values[position].isNull, !schema.fields[position].isOptional {
        let field = schema.fields[position].name
        let id = position == schema.idPosition ? nil : row[schema.idPosition].description
        throw CofferError(
          .invalidValue,
          "\(schema.name).\(field) is required but the value is null; give it a value or make it optional.",
          entity: schema.name, id: id, field: field)
      }
    }
    try KeySize.check(row, schema: schema)
    return row
  }

  /// The id, normalized, if it is of the entity's id kind.
  package static func validate(id: Value, schema: EntitySchema) throws -> Value {
    guard id.kind == schema.idField.kind else {
      throw CofferError(
        .invalidValue, "\(schema.name) ids are \(schema.idField.kind); \(id) is not.", entity: schema.name,
        field: schema.idField.name)
    }
    return id
  }

  static func normalize(_ value: Value, for field: Field, _ schema: EntitySchema) throws -> Value {
    switch (value, field.kind) {
    case (.double(let d), _) where d.isNaN:
      throw invalid(
        "Cannot compare '\(schema.name).\(field.name)' with NaN; NaN equals nothing.", schema, field.name)
    case (.date(let d), _) where d.timeIntervalSince1970.isNaN:
      throw invalid(
        "Cannot compare '\(schema.name).\(field.name)' with a date whose time is NaN; no date equals it.",
        schema,
        field.name)
    case (.int(let i), .double): return .double(Double(i))
    case (.date(let d), .date): return .date(Value.normalized(d))
    default:
      guard value.kind == field.kind else {
        throw invalid(
          "'\(schema.name).\(field.name)' is a \(field.kind) field; it cannot be compared with a \(value.kind?.description ?? "null") value.",
          schema, field.name)
      }
      return value
    }
  }

  static func unknownField(_ name: String, _ schema: EntitySchema) -> CofferError {
    let known = schema.fields.map(\.name).joined(separator: ", ")
    return CofferError(
      .invalidQuery, "\(schema.name) has no field '\(name)'. Its fields are: \(known).", entity: schema.name,
      field: name)
  }

  static func invalid(_ message: String, _ schema: EntitySchema, _ field: String?) -> CofferError {
    CofferError(.invalidQuery, message, entity: schema.name, field: field)
  }
}

/// The check of one value against its field, for ``QueryValidator``.
enum FieldValue {
  /// The value, normalized (dates to the microsecond), if it may be stored in the field.
  static func checked(_ value: Value, for schema: EntitySchema, at position: Int) throws -> Value {
    try check(value, for: schema, at: position) ?? value
  }

  /// Checks that a value (or null) may be stored in a field; returns its normalized form when
  /// that differs from the value (a date), and `nil` when the value is stored as it is. Whether
  /// the field may be null is the caller's check.
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` for NaN (a double, or a date whose time is NaN)
  ///   or a value of another kind.
  static func check(_ value: Value, for schema: EntitySchema, at position: Int) throws -> Value? {
    let kind = schema.fields[position].kind
    switch value {
    case .null:
      return nil
    case .double(let d) where d.isNaN:
      let field = schema.fields[position].name
      throw CofferError(
        .invalidValue,
        "\(schema.name).\(field) is NaN. NaN cannot be stored or compared; store nil (make the field optional) instead.",
        entity: schema.name, field: field)
    case .date(let date) where date.timeIntervalSince1970.isNaN:
      let field = schema.fields[position].name
      throw CofferError(
        .invalidValue,
        "\(schema.name).\(field) is a date whose time is NaN, which is no moment. Store a real date, or nil "
          + "(make the field optional) instead.", entity: schema.name, field: field)
    case .date(let date) where kind == .date:
      // A date already at the microsecond (as `Date.storedScalar` makes it) is stored as it
      // is, so that the row holding it is not copied.
      let normalized = Value.normalized(date)
      return normalized == date ? nil : .date(normalized)
    default:
      guard value.kind == kind else { throw wrongKind(value, schema, at: position) }
      return nil
    }
  }

  private static func wrongKind(_ value: Value, _ schema: EntitySchema, at position: Int) -> CofferError {
    let field = schema.fields[position]
    return CofferError(
      .invalidValue,
      "\(schema.name).\(field.name) holds \(field.kind) values; a \(value.kind?.description ?? "null") was given.",
      entity: schema.name, field: field.name)
  }
}
