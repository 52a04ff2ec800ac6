extension EntitySchema {
  /// Checks that `schema` differs from this (stored) schema only in names, as
  /// ``SchemaEditor/relabel(_:as:)`` requires: the entity's name, the fields' names and the
  /// names of the entities references point at may change; the number of fields, their order,
  /// kinds, optionality and defaults, the id position, the indexes (by field position and
  /// uniqueness) and the references (by field position and delete rule) stay.
  ///
  /// - Parameters:
  ///   - schema: the schema the entity would be relabeled as.
  ///   - store: the store's name, for the error.
  /// - Throws: ``CofferError/Code/invalidSchema`` naming the entity, and the field where there
  ///   is one, when anything but a name differs.
  @_spi(Backend) public func checkRelabel(as schema: EntitySchema, store: String?) throws {
    func fail(_ what: String, field: String? = nil) -> CofferError {
      CofferError(
        .invalidSchema,
        "Entity '\(name)' cannot be relabeled as '\(schema.name)': \(what) A relabel changes only names; "
          + "change the rest with a migration step that rewrites the rows.",
        store: store, entity: name, field: field)
    }
    guard !schema.name.isEmpty else { throw fail("the new name is empty.") }
    guard fields.count == schema.fields.count else {
      throw fail("the new schema has \(schema.fields.count) fields, the stored one \(fields.count).")
    }
    for (old, new) in zip(fields, schema.fields) {
      guard old.kind == new.kind else {
        throw fail("field '\(old.name)' is \(old.kind), '\(new.name)' would be \(new.kind).", field: old.name)
      }
      guard old.isOptional == new.isOptional else {
        throw fail("field '\(old.name)' would change whether it is optional.", field: old.name)
      }
      guard old.defaultValue == new.defaultValue else {
        throw fail("field '\(old.name)' would change its default.", field: old.name)
      }
    }
    guard idPosition == schema.idPosition else {
      throw fail(
        "the id would move from field '\(idField.name)' to '\(schema.idField.name)'.", field: idField.name)
    }
    guard positions(of: indexes) == schema.positions(of: schema.indexes) else {
      throw fail("the indexes would change; only the names of their fields may.")
    }
    let oldReferences = references.map { (positionTable[$0.field], $0.onDelete) }
    let newReferences = schema.references.map { (schema.positionTable[$0.field], $0.onDelete) }
    guard oldReferences.elementsEqual(newReferences, by: { $0.0 == $1.0 && $0.1 == $1.1 }) else {
      throw fail("the references would change; only the names of their fields and entities may.")
    }
  }

  /// Each index as the positions of its fields and its kind (unique, ordered or text).
  private func positions(of indexes: [Index]) -> [[Int?]] {
    indexes.map { index in
      index.fields.map { positionTable[$0] } + [index.isText ? -3 : index.isUnique ? -1 : -2]
    }
  }
}
