/// What a graph needs to know about an entity's values, whatever Swift type they have: the
/// schema, how to decode a row, how to validate a value, and whether reads retain values.
struct EntityAdapter: Sendable {
  var schema: EntitySchema
  /// Whether values read (not changed) are kept in the graph.
  var retainsLoaded: Bool
  var decode: (@Sendable (Row) throws -> any Sendable)?
  var validate: (@Sendable (any Sendable) -> [ValidationProblem])?

  /// The adapter of a ``Storable`` type.
  static func typed<T: Storable>(_ codec: RowCodec<T>) -> EntityAdapter {
    EntityAdapter(
      schema: codec.schema,
      retainsLoaded: !(T.self is any GraphOptOut.Type),
      decode: { try codec.decode($0) },
      validate: T.self is any Validatable.Type ? validateAny : nil)
  }

  /// The problems a value reports if it validates itself.
  @Sendable static func validateAny(_ value: any Sendable) -> [ValidationProblem] {
    guard let value = value as? any Validatable else { return [] }
    return value.validate()
  }

  /// An adapter that knows only the schema (an entity read from a snapshot and not yet used
  /// with its type).
  static func schemaOnly(_ schema: EntitySchema) -> EntityAdapter {
    EntityAdapter(schema: schema, retainsLoaded: true, decode: nil, validate: nil)
  }

  /// A graph value for a row, decoded when the adapter can.
  func value(_ row: Row) throws -> GraphValue {
    GraphValue(row: row, value: try decode?(row))
  }

  /// The names of the fields whose values differ between two rows; every field when one is
  /// missing.
  func changedFields(_ old: Row?, _ new: Row?) -> Set<String> {
    guard let old, let new else { return Set(schema.fields.map(\.name)) }
    var fields: Set<String> = []
    for position in 0..<min(old.count, new.count) where old[position] != new[position] {
      fields.insert(schema.fields[position].name)
    }
    return fields
  }
}
