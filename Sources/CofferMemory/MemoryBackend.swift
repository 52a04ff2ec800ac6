@_spi(Backend) import Coffer
import Synchronization

/// A store held in memory: the reference backend, and the one tests use.
///
/// Readers work on a snapshot taken under a readers–writer lock (constant time: the tables are
/// copy-on-write values), so a fetch never sees half of a batch and never waits for a query to
/// finish; a read of one id looks its row up under the lock, shared with other readers.
/// Writers apply each batch holding the lock alone, undoing it if any operation fails.
///
/// Open it as `memory:` for a fresh private store, or `memory:NAME` for a store shared by
/// everything in the process that opens the same name through the same registry — closing
/// one handle leaves the data for the others, and opening the name again finds it.
public final class MemoryBackend {
  /// `memory:` or `memory:NAME`.
  public let name: String
  /// Named stores can be reopened and evolve their schema; none is durable.
  @_spi(Backend) public let capabilities: BackendCapabilities
  let storage: MemoryStorage
  private let isClosed = Atomic<Bool>(false)
  /// How much of the change feed this handle keeps as it commits.
  let retention = LockedState(ChangeRetention.all)

  /// A fresh, private in-memory store.
  public convenience init() {
    self.init(name: "memory:", storage: MemoryStorage(name: "memory:"), shared: false)
  }

  init(name: String, storage: MemoryStorage, shared: Bool) {
    self.name = name
    self.storage = storage
    var capabilities: BackendCapabilities = [
      .crossEntityTransactions, .preconditions,
    ]
    if shared { capabilities.formUnion([.reopenable, .schemaEvolution, .observesOtherHandles]) }
    self.capabilities = capabilities
  }

  /// Prepares entities, evolving stored ones (see ``StorageBackend/prepare(_:)``), and lists
  /// every entity.
  @discardableResult
  public func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    try checkOpen()
    return try storage.tables.withLock { try $0.prepare(schemas) }
  }

  /// Evaluates the query on a snapshot and hands over each row; a lookup of one id reads its
  /// row under the lock instead (shared with other readers), which costs less than taking a
  /// snapshot.
  @_spi(Backend) public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try checkOpen()
    // One turn of the lock: the row of a lookup, or else the snapshot to evaluate.
    var found: Row?
    let taken = try storage.tables.withSharedLock { tables in
      try tables.lookUp(query, found: &found) ? nil : copy tables
    }
    guard let taken else {
      if let found { try visit(RowFields(found)) }
      return
    }
    try taken.read(query, visit)
  }

  /// Counts on a snapshot.
  @_spi(Backend) public func count(_ query: Query) async throws -> Int {
    try checkOpen()
    return try snapshot().count(query)
  }

  /// Applies the batch under the lock, all or nothing; the rows of a bulk insert are made
  /// one at a time, so the first failing row decides the error.
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try checkOpen()
    var recorded = false
    let summary = try storage.tables.withLock { tables in
      let summary = try applyRecording(changes, to: &tables, recorded: &recorded)
      storage.commits.add(1, ordering: .relaxed)
      return summary
    }
    if recorded { storage.signal.notify() }
    return summary
  }

  /// Reads, changes and stores the row under the lock that every batch takes, so no batch
  /// comes between; `false` when the entity is stored in another layout than `schema`.
  public func modifyInPlace(_ schema: EntitySchema, id: Value, _ change: (Row?) throws -> Row) async throws
    -> Bool
  {
    try checkOpen()
    var recorded = false
    let modified = try storage.tables.withLock { tables in
      guard tables.schema(of: schema.name) == schema else { return false }
      let row = try change(tables.row(of: schema.name, id: id))
      _ = try applyRecording(
        ChangeSet([.update(entity: schema.name, row: row)], layouts: [schema.name: schema]), to: &tables,
        recorded: &recorded)
      storage.commits.add(1, ordering: .relaxed)
      return true
    }
    if recorded { storage.signal.notify() }
    return modified
  }

  /// Runs a migration step's edit on a copy of the tables under the lock, keeping the copy only
  /// when `body` returns: readers see the tables before or after, never between.
  @_spi(Backend) public func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R)
    async throws -> R
  {
    try checkOpen()
    var recorded = false
    let result = try storage.tables.withLock { tables in
      // A migration step's rows are recorded, under the tables' lock, as the step is kept.
      let edit = try tables.edit(recordingChanges: storage.feed.withLock { $0.recording }, body)
      if edit.changed { storage.commits.add(1, ordering: .relaxed) }
      if let changes = edit.changes { recorded = record(changes) }
      return edit.result
    }
    if recorded { storage.signal.notify() }
    return result
  }

  /// How many batches every handle on a named store has applied; `nil` for a private store,
  /// which has no other handle.
  public func commitMarker() async throws -> UInt64? {
    try checkOpen()
    return capabilities.contains(.observesOtherHandles) ? storage.commits.load(ordering: .relaxed) : nil
  }

  /// Runs `body` on the tables as they are now: a copy-on-write value, so taking it costs
  /// nothing and batches applied meanwhile never reach it.
  @_spi(Backend) public func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws
    -> R
  {
    try checkOpen()
    return try await body(snapshot())
  }

  /// Marks this handle closed; a named store's data stays for other handles.
  public func close() async throws { isClosed.store(true, ordering: .releasing) }

  private func snapshot() -> InMemoryTables { storage.tables.withSharedLock { copy $0 } }

  func checkOpen() throws {
    if isClosed.load(ordering: .acquiring) {
      throw CofferError(.closed, "This store was closed. Open it again to use it.", store: name)
    }
  }
}

/// The tables of one in-memory store, shared by every handle opened on its name.
final class MemoryStorage: Sendable {
  /// Readers share the lock; batches, preparing and migration steps hold it alone.
  let tables: SharedLockedState<InMemoryTables>
  /// Batches applied, by every handle.
  let commits = Atomic<UInt64>(0)
  /// The change feed; taken while `tables` is held, never the other way round.
  let feed = LockedState(RecordedChangeLog())
  /// Wakes the feed's followers when a batch is recorded.
  let signal = ChangeSignal()
  init(name: String) { tables = SharedLockedState(InMemoryTables(storeName: name)) }
}

// The optional abilities whose methods are above.
@_spi(Backend) extension MemoryBackend: SnapshotReading, SchemaEditing, InPlaceModifying, CommitObserving {}

// The SPI conformance: apps reach a backend only through `Store`.
@_spi(Backend) extension MemoryBackend: StorageBackend {}
