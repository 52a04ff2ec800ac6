@_spi(Backend) extension CofferError {
  /// The error every backend gives for an insert of an id that is already stored.
  public static func idAlreadyStored(entity: String, id: Value, store: String?) -> CofferError {
    CofferError(
      .duplicateID,
      "A \(entity) with id \(id) is already stored. Use update or upsert to replace it. Nothing in the batch was applied.",
      store: store, entity: entity, id: id)
  }

  /// The error every backend gives for an update of an id that is not stored.
  public static func nothingToUpdate(entity: String, id: Value, store: String?) -> CofferError {
    CofferError(
      .notFound,
      "There is no \(entity) with id \(id) to update. Insert it (or upsert). Nothing in the batch was applied.",
      store: store, entity: entity, id: id)
  }

  /// The error every backend gives for a row that would repeat the values of unique `fields`
  /// that the stored row `holder` has.
  public static func uniqueFieldsHeld(
    entity: String, id: Value, fields: [String], by holder: Value, store: String?
  )
    -> CofferError
  {
    CofferError(
      .uniqueViolation,
      "\(entity) \(id) would have the same \(fields.joined(separator: ", ")) as \(entity) \(holder), "
        + "but \(fields.count == 1 ? "that field is" : "those fields are") unique. Nothing in the batch was applied.",
      store: store, entity: entity, id: id, field: fields.joined(separator: ","))
  }

  /// The error every schema editor gives for creating an entity, or relabelling one, under a
  /// name the store already holds.
  public static func entityAlreadyStored(_ entity: String, store: String?) -> CofferError {
    CofferError(
      .invalidSchema,
      "The store already has an entity '\(entity)'. Drop or relabel it first, or choose another name.",
      store: store, entity: entity)
  }
}
