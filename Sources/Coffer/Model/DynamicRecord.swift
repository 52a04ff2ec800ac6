/// A record as a dictionary of attributes, for entities whose schema is known only at run time
/// (a server's table, a user-defined form). It is stored in any backend like a typed value.
///
/// ```swift
/// var note = try DynamicRecord(notes)           // defaults applied; isNew until it has an id
/// try note.set("key", "n1")
/// try note.set("body", "Milk, eggs")
/// note.has("body")                              // true
/// note.unset("body")
/// try await store.upsert(note)
/// ```
public struct DynamicRecord: Sendable, Equatable, CustomStringConvertible {
  /// The record's entity.
  public let entity: DynamicEntity
  /// The attributes that have a value, by name. Unset attributes read as null.
  public private(set) var attributes: [String: Value] = [:]

  /// A new record with the entity's defaults and then `attributes`.
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` for an unknown attribute or a value of the
  ///   wrong kind.
  public init(_ entity: DynamicEntity, attributes: [String: Value] = [:]) throws {
    self.entity = entity
    self.attributes = entity.defaults.filter { !$0.value.isNull }
    try set(attributes)
  }

  /// The record a stored row stands for.
  init(_ entity: DynamicEntity, row: Row) {
    self.entity = entity
    for (position, field) in entity.schema.fields.enumerated() where position < row.count {
      if !row[position].isNull { attributes[field.name] = row[position] }
    }
  }

  /// The id attribute's value, or `nil` while the record has none.
  public var id: Value? { attributes[entity.idAttribute] }

  /// Whether the record has no id yet.
  public var isNew: Bool { id == nil }

  /// Whether an attribute has a (non-null) value.
  public func has(_ name: String) -> Bool { attributes[name] != nil }

  /// An attribute's value, or `nil` when it is unset.
  public func get(_ name: String) -> Value? { attributes[name] }

  /// An attribute's value, or `nil` when it is unset.
  public subscript(_ name: String) -> Value? { attributes[name] }

  /// Sets an attribute; setting null is the same as ``unset(_:)``.
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` for an attribute the entity does not have or a
  ///   value of the wrong kind; the record is unchanged.
  public mutating func set(_ name: String, _ value: some ValueConvertible) throws {
    try set([name: value.storedValue])
  }

  /// Sets several attributes: all of them, or none if one is refused.
  public mutating func set(_ values: [String: Value]) throws {
    var changed = attributes
    for (name, value) in values {
      guard let position = entity.schema.position(of: name) else {
        let known = entity.schema.fields.map(\.name).joined(separator: ", ")
        throw CofferError(
          .invalidValue, "\(entity.name) has no attribute '\(name)'. Its attributes are: \(known).",
          entity: entity.name, field: name)
      }
      let checked = try FieldValue.checked(value, for: entity.schema, at: position)
      changed[name] = checked.isNull ? nil : checked
    }
    attributes = changed
  }

  /// Removes an attribute's value; it reads as null (unsetting the id makes the record new).
  public mutating func unset(_ name: String) { attributes[name] = nil }

  /// The row the record is stored as.
  ///
  /// - Throws: ``CofferError/Code/invalidValue`` when the record has no id yet or a required
  ///   attribute is unset.
  public func row() throws -> Row {
    guard id != nil else {
      throw CofferError(
        .invalidValue,
        "This \(entity.name) record is new: set its '\(entity.idAttribute)' attribute before storing it.",
        entity: entity.name, field: entity.idAttribute)
    }
    let row = Row(entity.schema.fields.map { attributes[$0.name] ?? .null })
    return try QueryValidator.validate(row, schema: entity.schema)
  }

  /// Records are equal when their entities' schemas and their attributes are.
  public static func == (lhs: DynamicRecord, rhs: DynamicRecord) -> Bool {
    lhs.entity.schema == rhs.entity.schema && lhs.attributes == rhs.attributes
  }

  /// `Note n1 (3 attributes)`; values are not shown.
  public var description: String {
    "\(entity.name) \(id?.description ?? "(new)") (\(attributes.count) attributes)"
  }
}
