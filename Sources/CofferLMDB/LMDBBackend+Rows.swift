import CLMDB
@_spi(Backend) import Coffer

extension LMDBBackend {
  /// The values of a stored row in the declared schema's shape, whatever layout it was written
  /// under.
  func decode(
    _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, handle: EntityHandle,
    in transaction: Transaction
  )
    throws -> [Value]
  {
    do {
      return try handle.shape.decode(bytes)
    } catch .otherLayout(let layout) {
      return try decode(bytes, key: key, layout: layout, handle: handle, in: transaction)
    } catch {
      throw damage(error, key: key, schema: handle.schema)
    }
  }

  /// Decodes a row of an older (or another process's) layout and evolves it.
  private func decode(
    _ bytes: UnsafeRawBufferPointer, key: UnsafeRawBufferPointer, layout: Int, handle: EntityHandle,
    in transaction: Transaction
  ) throws -> [Value] {
    let older: OlderLayout
    if let known = handle.evolutions[layout] {
      guard let known else { throw mismatch(layout, handle) }
      older = known
    } else {
      guard let record = try Catalog.record(handle.schema.name, in: transaction, catalog: catalog),
        record.layouts.indices.contains(layout)
      else {
        throw damage(
          .malformed("it names layout \(layout), which the catalog does not list"), key: key,
          schema: handle.schema)
      }
      guard let made = OlderLayout(layout, stored: record.layouts[layout], as: handle.schema, store: name)
      else {
        throw mismatch(layout, handle)
      }
      older = made
    }
    do {
      return older.evolution.migrate(Row(try older.shape.decode(bytes))).values
    } catch {
      throw damage(error, key: key, schema: handle.schema)
    }
  }

  private func mismatch(_ layout: Int, _ handle: EntityHandle) -> CofferError {
    CofferError(
      .schemaMismatch,
      "Some \(handle.schema.name) rows were written under a schema (layout \(layout)) that cannot be read as the "
        + "declared one; another process may be using a different version of the type. Prepare the entity again.",
      store: name, entity: handle.schema.name, path: path)
  }

  /// The error for a row that cannot be read.
  func damage(_ damage: RowDamage, key: UnsafeRawBufferPointer, schema: EntitySchema) -> CofferError {
    Self.damage(damage, key: key, schema: schema, store: name, path: path)
  }

  /// The error for a row of store `name` at `path` that cannot be read.
  static func damage(
    _ damage: RowDamage, key: UnsafeRawBufferPointer, schema: EntitySchema, store name: String, path: String
  ) -> CofferError {
    let id = KeyEncoding.decodeID(key, kind: schema.idField.kind)?.description
    let which = id.map { "The \(schema.name) row with id \($0)" } ?? "A \(schema.name) row"
    switch damage {
    case .newerFormat(let version):
      return CofferError(
        .corruptStore,
        "\(which) was written by a newer Coffer (row format \(version); this one reads up to \(RowCodec.version)). "
          + "Upgrade Coffer to read this store; nothing was changed.",
        store: name, entity: schema.name, id: id, path: path)
    case .malformed(let reason):
      return CofferError(
        .corruptStore,
        "\(which) is damaged: \(reason). Restore the store from a backup, or delete the row.",
        store: name, entity: schema.name, id: id, path: path)
    case .otherLayout(let layout):
      return CofferError(
        .corruptStore, "\(which) has an unexpected layout \(layout). Restore the store from a backup.",
        store: name, entity: schema.name, id: id, path: path)
    }
  }

  /// Encodes a row for storage under the handle's layout, reusing `buffer`.
  static func encode(_ values: [Value], handle: EntityHandle, into buffer: inout [UInt8]) {
    buffer.removeAll(keepingCapacity: true)
    RowCodec.encode(values, layout: handle.layout, into: &buffer)
  }
}
