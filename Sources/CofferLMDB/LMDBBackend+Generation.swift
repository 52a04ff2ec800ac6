import CLMDB
@_spi(Backend) import Coffer
import Synchronization

extension Catalog {
  /// The catalog's `generation` key: how many schema edits that created, dropped or relabelled
  /// an entity the store has committed, 8 bytes big-endian; absent (0) in a store never edited.
  static let generationKey = Array("generation".utf8)

  /// The store's schema generation as `transaction` sees it.
  static func generation(in transaction: Transaction, catalog: MDB_dbi) throws -> UInt64 {
    guard let bytes = try transaction.get(catalog, generationKey) else { return 0 }
    guard bytes.count == 8 else {
      throw CofferError(
        .corruptStore, "The catalog's generation entry is damaged. Restore the store from a backup.",
        store: transaction.context.name, path: transaction.context.path)
    }
    return bytes.reduce(0) { $0 << 8 | UInt64($1) }
  }

  /// Stores the schema generation.
  static func write(generation: UInt64, in transaction: Transaction, catalog: MDB_dbi) throws {
    try transaction.put(
      catalog, generationKey, (0..<8).reversed().map { UInt8(truncatingIfNeeded: generation >> ($0 * 8)) })
  }
}

extension LMDBBackend {
  /// Refuses a batch that would write through a handle another handle's or process's schema
  /// edit made stale: an entity dropped, renamed or recreated since this handle prepared it,
  /// whose rows would otherwise go to a retired database.
  ///
  /// Costs one catalog lookup while the store's generation is the one this handle knows. When
  /// it changed, each prepared entity's handle is checked against the catalog; the batch fails
  /// only when it uses a stale one, and the new generation is adopted once none is stale.
  func checkHandlesCurrent(for changes: ChangeSet, in transaction: Transaction) throws {
    let stored = try Catalog.generation(in: transaction, catalog: catalog)
    guard stored != generation.load(ordering: .acquiring) else { return }
    let used = Set(changes.operations.map(\.entity) + changes.preconditions.map(\.query.entity))
    var allCurrent = true
    for (entity, handle) in entities.withLock({ $0 }) where try !isCurrent(handle, in: transaction) {
      allCurrent = false
      guard used.contains(entity) else { continue }
      throw CofferError(
        .schemaMismatch,
        "Entity '\(entity)' was dropped, renamed or recreated by a migration through another handle or process "
          + "since this handle prepared it. Open the store again. Nothing in the batch was applied.",
        store: name, entity: entity, path: path)
    }
    if allCurrent { generation.store(stored, ordering: .releasing) }
  }

  /// Whether the catalog still records the handle's entity with its rows database and, for
  /// the handle's layout, its fields.
  private func isCurrent(_ handle: EntityHandle, in transaction: Transaction) throws -> Bool {
    guard let record = try Catalog.record(handle.schema.name, in: transaction, catalog: catalog),
      record.layouts.indices.contains(handle.layout),
      record.layouts[handle.layout].fields == handle.schema.fields,
      let rows = try transaction.open(record.rows, flags: 0)
    else { return false }
    return rows == handle.rows
  }
}
