import CLMDB
import Coffer

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
        store: transaction.context.name, entity: schema.name, id: id.description,
        field: fields.joined(separator: ","))
    }
    try transaction.put(database, key, idKey, flags: MDB_NODUPDATA)
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
