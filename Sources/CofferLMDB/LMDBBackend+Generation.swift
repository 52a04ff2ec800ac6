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
  /// Checks the prepared handles against the catalog before a batch writes through them, in its
  /// transaction. A handle that another handle's or process's prepare of its entity made stale
  /// (new or dropped indexes or fields) is made again from the catalog, so the batch keeps the
  /// indexes the store has now (see ``refreshed(_:record:in:)``); the returned
  /// ``HandleCheck`` carries those handles, for the batch to use and to publish once it
  /// commits (liblmdb keeps the databases a transaction opens only if it commits).
  ///
  /// Refuses a batch that would write through a handle another handle's or process's schema
  /// edit made stale beyond that: an entity dropped, renamed or recreated since this handle
  /// prepared it, whose rows would otherwise go to a retired database.
  ///
  /// Costs one catalog lookup while the store's generation is the one this handle knows. When
  /// it changed, each prepared entity's handle is checked against the catalog; the batch fails
  /// only when it uses one that is gone, and the new generation is adopted once none is stale.
  func checkHandlesCurrent(for changes: ChangeSet, in transaction: Transaction) throws -> HandleCheck {
    let stored = try Catalog.generation(in: transaction, catalog: catalog)
    guard stored != generation.load(ordering: .acquiring) else { return HandleCheck() }
    let used = Set(changes.operations.map(\.entity) + changes.preconditions.map(\.query.entity))
    var check = HandleCheck(generation: stored)
    for (entity, handle) in entities.withLock({ $0 }) {
      switch try currency(of: handle, in: transaction) {
      case .current: continue
      case .refreshable:
        if let record = try Catalog.record(entity, in: transaction, catalog: catalog),
          let fresh = try refreshed(handle, record: record, in: transaction)
        {
          check.fresh[entity] = (handle, fresh)
          continue
        }
      case .gone: break
      }
      check.generation = nil
      guard used.contains(entity) else { continue }
      throw CofferError(
        .schemaMismatch,
        "Entity '\(entity)' was dropped, renamed or recreated by a migration through another handle or process "
          + "since this handle prepared it, or prepared with a field its rows lack. Open the store again. Nothing in "
          + "the batch was applied.",
        store: name, entity: entity, path: path)
    }
    return check
  }

  /// Publishes the handles a committed batch's check made, unless this backend prepared the
  /// entity again meanwhile, and adopts the generation they are current at.
  func publish(_ check: HandleCheck) {
    guard check.generation != nil || !check.fresh.isEmpty else { return }
    entities.withLock { entities in
      for (entity, made) in check.fresh where entities[entity] === made.stale {
        entities[entity] = made.fresh
      }
    }
    if let stored = check.generation { generation.store(stored, ordering: .releasing) }
  }

  /// How a handle stands against the catalog.
  enum Currency {
    /// The catalog records what the handle was made from.
    case current
    /// Another prepare changed the entity's stored schema or indexes; the handle can be made
    /// again from the catalog.
    case refreshable
    /// The entity was dropped, relabelled or recreated: its rows database or the layout the
    /// handle writes is gone.
    case gone
  }

  /// Whether the catalog still records the handle's entity with its rows database and, for
  /// the handle's layout, its fields; and whether its stored schema and index databases are
  /// still the ones the handle keeps.
  func currency(of handle: EntityHandle, in transaction: Transaction) throws -> Currency {
    guard let record = try Catalog.record(handle.schema.name, in: transaction, catalog: catalog),
      record.layouts.indices.contains(handle.layout),
      record.layouts[handle.layout].fields == handle.schema.fields,
      let rows = try transaction.open(record.rows, flags: 0), rows == handle.rows
    else { return .gone }
    let writer = handle.writer
    let current =
      writer.schema == record.layouts[record.current] && writer.layout == record.current
      && writer.indexes.map(\.name) == record.indexes
    return current ? .current : .refreshable
  }

  /// A handle for the declared schema of `handle` as the catalog records its entity now: rows
  /// written under the handle's layout, every index of the stored schema kept on writes, and
  /// those whose fields the declared schema has alike walked by queries. `nil` when rows of the
  /// declared schema cannot be read in the stored one (a field it lacks is required, with no
  /// default), so writes through it would be unreadable.
  func refreshed(_ handle: EntityHandle, record: Catalog.EntityRecord, in transaction: Transaction)
    throws -> EntityHandle?
  {
    let stored = try openHandle(record, in: transaction)
    let declared = handle.schema
    if stored.schema == declared { return stored }
    let evolution: SchemaEvolution?
    if stored.schema.fields == declared.fields {
      evolution = nil
    } else {
      guard let made = try? SchemaEvolution(from: declared, to: stored.schema, store: name) else {
        return nil
      }
      evolution = made
    }
    let walkable = stored.indexes.compactMap { index -> IndexHandle? in
      let fields = index.index.fields
      guard fields.allSatisfy({ declared.field(named: $0) == stored.schema.field(named: $0) }) else {
        return nil
      }
      return IndexHandle(
        index: index.index, positions: fields.compactMap { declared.position(of: $0) },
        database: index.database,
        name: index.name)
    }
    return EntityHandle(
      schema: declared, layout: handle.layout, rows: stored.rows, indexes: walkable,
      evolutions: evolutions(record, to: declared, except: handle.layout), maintained: (stored, evolution))
  }

  /// `handle`, or when another process may have dropped an index it has since it was made (the
  /// store's schema generation moved), one with only the indexes the catalog still records:
  /// what a read may walk. A walk of a dropped index would find nothing.
  func walkable(_ handle: EntityHandle, in transaction: Transaction) throws -> EntityHandle {
    if handle.indexes.isEmpty { return handle }
    let stored = try Catalog.generation(in: transaction, catalog: catalog)
    // Current at the generation this backend knows, unless a batch replaced the handle since the
    // read took it.
    if stored == generation.load(ordering: .acquiring),
      entities.withLock({ $0[handle.schema.name] === handle })
    {
      return handle
    }
    let known = walkableHandles.withLock { cache in
      cache.generation == stored ? cache.handles.first { $0.handle === handle }?.walkable : nil
    }
    if let known { return known }
    guard let record = try Catalog.record(handle.schema.name, in: transaction, catalog: catalog) else {
      return handle
    }
    let schema = record.layouts[record.current]
    let recorded = Set(zip(schema.indexes, record.indexes).map { "\($0.name)\u{0}\($1)" })
    let kept = handle.indexes.filter { recorded.contains("\($0.index.name)\u{0}\($0.name)") }
    let walkable =
      kept.count == handle.indexes.count
      ? handle
      : EntityHandle(
        schema: handle.schema, layout: handle.layout, rows: handle.rows, indexes: kept,
        evolutions: handle.evolutions, maintained: handle.maintained)
    walkableHandles.withLock { cache in
      if cache.generation != stored { cache = WalkableHandles(generation: stored) }
      cache.handles.append((handle, walkable))
    }
    return walkable
  }
}

/// What ``LMDBBackend/walkable(_:in:)`` found for handles at one schema generation of the
/// store, so that reads check the catalog once per handle and generation.
struct WalkableHandles: Sendable {
  var generation: UInt64
  var handles: [(handle: EntityHandle, walkable: EntityHandle)] = []
}

/// What ``LMDBBackend/checkHandlesCurrent(for:in:)`` found: handles made again from the
/// catalog, by entity, and the store's generation to adopt once they are published (`nil` when
/// some handle stays stale).
struct HandleCheck: Sendable {
  var generation: UInt64?
  var fresh: [String: (stale: EntityHandle, fresh: EntityHandle)] = [:]

  /// The handle a batch uses for an entity: the one made again, if any.
  func handle(_ entity: String, of backend: LMDBBackend) throws -> EntityHandle {
    try fresh[entity]?.fresh ?? backend.handle(entity)
  }
}
