import CLMDB
@_spi(Backend) import Coffer

extension IndexHandle {
  /// Adds a row's entry, first checking a unique index: another id under the same key, with no
  /// null in it, is a `uniqueViolation`. `key` is scratch space.
  func add(
    _ values: [Value], idKey: [UInt8], schema: EntitySchema, key: inout [UInt8], in transaction: Transaction
  ) throws {
    let hasNull = self.key(values, into: &key)
    if index.isUnique, !hasNull, let holder = try transaction.get(database, key),
      !holder.elementsEqual(idKey)
    {
      let other = KeyEncoding.decodeID(holder, kind: schema.idField.kind)?.description ?? "another row"
      let id = values[schema.idPosition]
      let fields = index.fields
      throw CofferError(
        .uniqueViolation,
        "\(schema.name) \(id) would have the same \(fields.joined(separator: ", ")) as \(schema.name) \(other), "
          + "but \(fields.count == 1 ? "that field is" : "those fields are") unique. Nothing in the batch was applied.",
        store: transaction.context.name, entity: schema.name, id: id,
        field: fields.joined(separator: ","))
    }
    do {
      try transaction.put(database, key, idKey, flags: MDB_NODUPDATA)
    } catch let error as CofferError where error.code == .invalidValue {
      // The index key (or the id stored under it) is too long: say which field of which row.
      let id = values[schema.idPosition]
      throw CofferError(
        .invalidValue,
        "\(schema.name) \(id) makes an index key of \(key.count) bytes from \(index.fields.joined(separator: ", ")) "
          + "(and an id key of \(idKey.count) bytes); LMDB holds at most \(LMDBEnvironment.maxKeySize) bytes in each. "
          + "Shorten the value or remove the index. Nothing in the batch was applied.",
        store: error.store, entity: schema.name, id: id,
        field: index.fields.joined(separator: ","), path: error.path)
    }
  }

  /// Removes a row's entry. `key` is scratch space.
  func remove(_ values: [Value], idKey: [UInt8], key: inout [UInt8], in transaction: Transaction) throws {
    self.key(values, into: &key)
    try transaction.delete(database, key, idKey)
  }

  /// Moves a row's entry from its old values to its new ones, if its key changed.
  func replace(
    _ old: [Value], with new: [Value], idKey: [UInt8], schema: EntitySchema, key: inout [UInt8],
    in transaction: Transaction
  ) throws {
    if positions.allSatisfy({ old[$0] == new[$0] }) { return }
    try remove(old, idKey: idKey, key: &key, in: transaction)
    try add(new, idKey: idKey, schema: schema, key: &key, in: transaction)
  }
}
