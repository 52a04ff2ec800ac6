import CLMDB
@_spi(Backend) import Coffer
import Synchronization

@_spi(Backend) extension LMDBBackend: SchemaEditing {
  /// Runs `body` in one LMDB write transaction on the store's writer thread, off the Swift
  /// concurrency pool, with an editor over the catalog and the entities' databases; commits
  /// durably when it returns and aborts when it throws, rethrowing its error.
  ///
  /// When the map fills up, the transaction is aborted, the map grown (up to
  /// ``Configuration/maxMapSize``) and `body` run again from the start on a fresh editor, as a
  /// batch is: `body` must act only through the editor. Readers go on meanwhile and see the
  /// state before the commit. Once it commits, the handles of the entities created, dropped or
  /// relabelled are replaced, still under the writer lock: a dropped or renamed entity is no
  /// longer prepared, a created or renamed one is prepared with its stored schema.
  ///
  /// Dropped entities' databases are emptied and kept, never deleted or given to another
  /// entity, so a reader that still holds an old handle reads nothing rather than another
  /// entity's rows (Docs/Formats.md, "LMDB stores").
  public func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R) async throws -> R {
    try checkOpen()
    let edit = try await environment.writeOffPool(
      { transaction in
        let before = try Catalog.generation(in: transaction, catalog: catalog)
        let editor = LMDBSchemaEditor(backend: self, transaction: transaction)
        defer { editor.finish() }
        let result: R
        do {
          result = try body(editor)
        } catch {
          // The body may have caught and wrapped the editor's signal; retry on a larger map.
          if editor.filledMap { throw MapFullSignal() }
          throw error
        }
        if editor.filledMap { throw MapFullSignal() }
        guard !editor.touched.isEmpty else {
          return SchemaEdit(result: result, handles: [:], generations: nil, feed: editor.recordedFeed)
        }
        // Other handles on the store find their handles of these entities stale by this.
        try Catalog.write(generation: before &+ 1, in: transaction, catalog: catalog)
        return SchemaEdit(
          result: result, handles: try editor.handlesToPublish(), generations: (before, before &+ 1),
          feed: editor.recordedFeed)
      },
      committed: { edit in
        self.entities.withLock { entities in
          for (entity, handle) in edit.handles { entities[entity] = handle }
        }
        // This handle's others are as current as before the edit.
        if let (before, after) = edit.generations {
          _ = self.generation.compareExchange(
            expected: before, desired: after, ordering: .acquiringAndReleasing)
        }
        if let feed = edit.feed { self.feedCommitted(feed) }
      })
    return edit.result
  }

  /// A handle on a stored entity in its current stored schema, its databases opened in
  /// `transaction`.
  func openHandle(_ record: Catalog.EntityRecord, in transaction: Transaction) throws -> EntityHandle {
    let schema = record.layouts[record.current]
    func missing(_ database: String) -> CofferError {
      CofferError(
        .corruptStore,
        "The database '\(database)' of \(schema.name) is missing. Restore the store from a backup.",
        store: name, entity: schema.name, path: path)
    }
    guard let rows = try transaction.open(record.rows, flags: 0) else { throw missing(record.rows) }
    let indexes = try zip(schema.indexes, record.indexes).map { index, database in
      guard let handle = try transaction.open(database, flags: MDB_DUPSORT) else { throw missing(database) }
      return IndexHandle(
        index: index, positions: index.fields.compactMap { schema.position(of: $0) }, database: handle,
        name: database)
    }
    return EntityHandle(
      schema: schema, layout: record.current, rows: rows, indexes: indexes,
      evolutions: evolutions(record, to: schema, except: record.current))
  }
}

/// What an edit returns from its transaction: the body's result, the handles to publish, and
/// the store's schema generation before and after the edit when it changed.
private struct SchemaEdit<R: Sendable>: Sendable {
  let result: R
  let handles: [String: EntityHandle?]
  let generations: (before: UInt64, after: UInt64)?
  /// The change feed's database, when the step's rows were recorded in it.
  let feed: MDB_dbi?
}
