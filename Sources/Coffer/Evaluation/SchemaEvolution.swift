/// How rows stored under one schema are read under another: the rules of
/// ``StorageBackend/prepare(_:)``, computed once so every backend applies them the same way.
///
/// - A declared field that was not stored reads as its ``Field/defaultValue``, or null if it is
///   optional; a required field with no default cannot be added.
/// - A stored field that is no longer declared is ignored.
/// - A field whose kind changed, an id field that changed, or a field that became required
///   with no default to replace stored nulls, is a ``CofferError/Code/schemaMismatch``.
@_spi(Backend) public struct SchemaEvolution: Sendable, Hashable {
  /// The schema rows are stored in.
  public let stored: EntitySchema
  /// The schema the code declares.
  public let declared: EntitySchema
  /// For each declared field, the stored position its value comes from, or `nil` when it is new.
  public let sources: [Int?]

  /// Plans the evolution from a stored schema to a declared one.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` naming entity, field, stored and declared
  ///   kinds, and what to do.
  public init(from stored: EntitySchema, to declared: EntitySchema, store: String? = nil) throws {
    func mismatch(_ field: String, _ message: String) -> CofferError {
      CofferError(.schemaMismatch, message, store: store, entity: declared.name, field: field)
    }
    if stored.idField.name != declared.idField.name || stored.idField.kind != declared.idField.kind {
      throw mismatch(
        declared.idField.name,
        "\(declared.name) is stored with id '\(stored.idField.name)' (\(stored.idField.kind)) but declared with id "
          + "'\(declared.idField.name)' (\(declared.idField.kind)). An entity's id cannot change; use a new entity name."
      )
    }
    var sources: [Int?] = []
    for field in declared.fields {
      // A null default fills nothing a required field could hold.
      let hasDefault = field.defaultValue.map { !$0.isNull } ?? false
      guard let position = stored.position(of: field.name) else {
        guard field.isOptional || hasDefault else {
          throw mismatch(
            field.name,
            "\(declared.name).\(field.name) is a new required field, so rows already stored have no value for it. "
              + "Make it optional or give it a default (fieldDefaults).")
        }
        sources.append(nil)
        continue
      }
      let old = stored.fields[position]
      guard old.kind == field.kind else {
        throw mismatch(
          field.name,
          "\(declared.name).\(field.name) is stored as \(old.kind) but declared as \(field.kind). A field cannot change "
            + "type in place: add a new field with the new type (and drop the old one), or migrate the data.")
      }
      if old.isOptional, !field.isOptional, !hasDefault {
        throw mismatch(
          field.name,
          "\(declared.name).\(field.name) was optional and is now required, but stored rows may hold null. "
            + "Keep it optional or give it a default (fieldDefaults).")
      }
      sources.append(position)
    }
    self.stored = stored
    self.declared = declared
    self.sources = sources
  }

  /// Whether stored rows already have the declared shape.
  public var isIdentity: Bool {
    stored.fields.count == declared.fields.count
      && sources.enumerated().allSatisfy { $0.element == $0.offset }
      && zip(stored.fields, declared.fields).allSatisfy { $0.isOptional == $1.isOptional || $1.isOptional }
  }

  /// A stored row in the declared shape.
  public func migrate(_ row: Row) -> Row {
    var values: [Value] = []
    values.reserveCapacity(declared.fields.count)
    for (field, source) in zip(declared.fields, sources) {
      guard let source else {
        values.append(field.defaultValue ?? .null)
        continue
      }
      let value = row[source]
      values.append(value.isNull && !field.isOptional ? (field.defaultValue ?? .null) : value)
    }
    return Row(values)
  }
}
