/// An entity whose fields are known only at run time, for ``DynamicRecord``s: its schema (with
/// the id attribute of your choice), default attribute values, and an optional validation rule.
///
/// ```swift
/// let notes = try DynamicEntity(
///   name: "Note",
///   fields: [Field("key", .string), Field("title", .string), Field("body", .string, isOptional: true)],
///   idAttribute: "key",
///   defaults: ["title": "Untitled"])
/// ```
public struct DynamicEntity: Sendable {
  /// The schema records are stored with.
  public let schema: EntitySchema
  /// The values a new record starts with, by attribute name.
  public let defaults: [String: Value]
  /// The rule a ``ModelGraph`` checks before accepting a change to a record; `nil` for none.
  public var validate: (@Sendable (DynamicRecord) -> [ValidationProblem])?

  /// An entity from its fields.
  ///
  /// - Parameters:
  ///   - name: the entity's name in the store.
  ///   - fields: its fields, in row order; one of them is the id attribute.
  ///   - idAttribute: the field that identifies a record; `"id"` by default.
  ///   - defaults: starting values of new records.
  ///   - indexes: secondary indexes and unique constraints; none by default.
  ///   - references: fields that hold the id of another entity's row, with the rule for when
  ///     that row is deleted (see ``EntityReference``); none by default. The store keeps them
  ///     whole exactly as for typed models.
  ///   - validate: the rule a ``ModelGraph`` checks before accepting a change to a record
  ///     (``validate``); none by default.
  /// - Throws: ``CofferError/Code/invalidSchema`` for a malformed schema (a reference on a
  ///   field the entity lacks, among others), or a default for an unknown field or of the
  ///   wrong kind.
  public init(
    name: String, fields: [Field], idAttribute: String = "id", defaults: [String: Value] = [:],
    indexes: [Index] = [], references: [EntityReference] = [],
    validate: (@Sendable (DynamicRecord) -> [ValidationProblem])? = nil
  ) throws {
    try self.init(
      schema: EntitySchema(
        name: name, fields: fields, idField: idAttribute, indexes: indexes, references: references),
      defaults: defaults, validate: validate)
  }

  /// An entity over a schema.
  public init(
    schema: EntitySchema, defaults: [String: Value] = [:],
    validate: (@Sendable (DynamicRecord) -> [ValidationProblem])? = nil
  ) throws {
    for (name, value) in defaults {
      guard let position = schema.position(of: name) else {
        throw CofferError(
          .invalidSchema, "A default is given for '\(name)', which \(schema.name) does not have.",
          entity: schema.name, field: name)
      }
      _ = try FieldValue.checked(value, for: schema, at: position)
    }
    self.schema = schema
    self.defaults = defaults
    self.validate = validate
  }

  /// The entity's name.
  public var name: String { schema.name }
  /// The name of the attribute that holds a record's id.
  public var idAttribute: String { schema.idField.name }
}
