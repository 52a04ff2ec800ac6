@_spi(Backend) import Coffer
import Foundation
import Logging

/// A store kept in memory and persisted to one property-list file that any plist tool can read.
///
/// Open loads the whole file; queries run on the core's in-memory evaluator. Each write
/// replaces the file atomically (temporary file, flush, rename, flush the directory), and
/// re-encodes only the rows that changed since the last write: every other row is copied from
/// its cached encoding. Only one process may have a store open (an advisory lock on
/// `PATH.lock`).
///
/// ```swift
/// let store = try await Store.open(url: "plist:///var/app/store.plist?format=xml", registry: .builtIn)
/// ```
///
/// The file layout is specified in Docs/Formats.md.
public final class PlistBackend {
  /// `plist:///ABSOLUTE/PATH` or `plist:RELATIVE/PATH`.
  public let name: String
  /// Reopenable, evolving, atomic across entities; durable with ``Persistence/immediate``.
  @_spi(Backend) public let capabilities: BackendCapabilities
  /// How the store is written.
  public let configuration: Configuration
  /// Where the backend logs opening and file writes, with the store's name as metadata.
  let logger: Logger
  /// The store file's path.
  public var path: String { file.path }

  let file: StoreFile
  let format: Format
  /// What readers see: always a state whose every batch is complete (and, when the policy is
  /// immediate, on disk).
  let published: LockedState<Published>
  /// The writer's own copy of the tables, the row cache and the write bookkeeping. Writers
  /// are serialized by this lock.
  let writer: LockedState<WriterState>
  /// The thread every write (and its `fsync`) runs on, off the Swift concurrency pool.
  let blocking = BlockingQueue(label: "coffer.plist.writer")
  /// The change feed as readers see it: a batch is appended when its tables are published,
  /// under the writer's lock (`PlistBackend+Changes.swift`).
  let feed: LockedState<RecordedChangeLog>
  /// The retention this handle trims the feed to.
  let retention = LockedState(ChangeRetention.all)
  /// Wakes followers of the feed when a batch is recorded.
  let signal = ChangeSignal()

  struct Published: Sendable {
    var tables: InMemoryTables
    var isOpen = true
  }

  struct WriterState: Sendable {
    /// The same content as the published tables, in storage of its own, so that a batch is
    /// applied in place instead of copying every row (see ``mutate(_:)``).
    var working: InMemoryTables
    var cache: [String: [Value: EncodedRow]] = [:]
    var unsavedOperations = 0
    var isDirty = false
    var timerScheduled = false
    var lock: Int32?
  }

  /// Opens (or creates) the store file at `path`.
  ///
  /// - Throws: ``CofferError/Code/locked`` when another process has it open,
  ///   ``CofferError/Code/corruptStore`` for a truncated, damaged, foreign or newer-format file
  ///   (which is left untouched), ``CofferError/Code/io`` or ``CofferError/Code/storageFull``
  ///   when the directory cannot be written.
  public init(path: String, configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
    let file = StoreFile(path: path)
    self.file = file
    self.name = file.storeName
    self.configuration = configuration
    let logger = (logger ?? .disabled).forStore(file.storeName)
    self.logger = logger
    var capabilities: BackendCapabilities = [
      .reopenable, .crossEntityTransactions, .schemaEvolution, .preconditions,
    ]
    if configuration.persistence == .immediate { capabilities.insert(.durable) }
    self.capabilities = capabilities

    let lock = try file.lock()
    file.removeAbandonedTemporaries()
    do {
      var tables = InMemoryTables(storeName: name)
      let existing = try file.read()
      var fileFormat: Format?
      var feed = RecordedChangeLog()
      if let existing {
        let loaded = try StoreReader.load(existing, file: file)
        try tables.prepare(loaded.schemas)
        for (entity, rows) in loaded.rows { try tables.load(rows, into: entity) }
        tables.migrations = loaded.migrations
        fileFormat = loaded.format
        feed = loaded.feed ?? RecordedChangeLog()
      }
      self.format = configuration.format ?? fileFormat ?? .binary
      var writerState = WriterState(working: tables, lock: lock)
      if existing == nil || fileFormat != format {
        try Self.write(
          &writerState, to: file, format: configuration.format ?? fileFormat ?? .binary, feed: feed,
          logger: logger)
      }
      self.feed = LockedState(feed)
      self.published = LockedState(Published(tables: tables))
      self.writer = LockedState(writerState)
      logger.debug(
        "Opened the property-list file",
        metadata: [
          "coffer.path": .string(path), "coffer.format": .string("\(format)"),
          "coffer.entities": .stringConvertible(tables.schemas.count),
        ])
    } catch let error as CofferError {
      file.unlock(lock)
      throw error
    } catch {
      file.unlock(lock)
      throw CofferError(.io, "Could not open the store: \(error)", store: name, path: path, underlying: error)
    }
  }

  /// Prepares entities, evolving stored ones, and writes the file when anything changed;
  /// lists every entity.
  @discardableResult
  public func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    try await blocking.run { [self] in try prepareNow(schemas) }
  }

  private func prepareNow(_ schemas: [EntitySchema]) throws -> [EntitySchema] {
    try mutate { tables, cache in
      let before = tables.schemas
      let stored = try tables.prepare(schemas)
      let changed = schemas.filter { before[$0.name] != $0 }
      for schema in changed { cache?[schema.name] = nil }
      return (0, !changed.isEmpty, stored)
    }
  }

  /// Evaluates the query on the current state and hands over each row.
  @_spi(Backend) public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try snapshot().read(query, visit)
  }

  /// Counts on the current state.
  @_spi(Backend) public func count(_ query: Query) async throws -> Int { try snapshot().count(query) }

  /// Runs `body` on the published tables as they are now: a copy-on-write value, so taking
  /// it costs nothing and batches applied meanwhile never reach it.
  @_spi(Backend) public func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws
    -> R
  {
    try await body(try snapshot())
  }

  /// Applies the batch all or nothing and, with ``Persistence/immediate``, writes the file
  /// before returning; if the write fails the batch is not applied. Each row of a bulk insert
  /// is made once, and counts as one change towards ``Persistence/everyChanges(_:)``.
  @discardableResult
  @_spi(Backend) public func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try await blocking.run { [self] in try applyNow(changes) }
  }

  private func applyNow(_ changes: ChangeSet) throws -> ChangeSummary {
    // The batch is applied twice (see `mutate`): the replay reuses the rows the first run made.
    var once = changes
    var operations = 0
    for (position, operation) in changes.operations.enumerated() {
      guard case .insertMany(let entity, let rows) = operation else {
        operations += 1
        continue
      }
      once.operations[position] = .insertMany(entity: entity, rows: rows.remembering())
      operations += rows.count
    }
    let recording = feed.withLock { $0.recording }
    // The batch's row changes, gathered on its first run, when the store records a feed.
    var payload: [UInt8]?
    return try mutate(recorded: { payload }) { tables, cache in
      let summary: ChangeSummary
      if recording, cache != nil {
        var collector = ChangeCollector()
        summary = try tables.apply(once, collecting: &collector)
        payload = collector.encoded()
      } else {
        summary = try tables.apply(once)
      }
      if cache != nil { updateCache(&cache, tables: tables, for: once) }
      return (operations, operations > 0, summary)
    }
  }

  /// Runs a migration step's edit on the writer's tables and, when it changed anything, writes
  /// the whole file before returning, whatever the persistence policy: the file is replaced atomically, so a killed
  /// process leaves it before or after the step. If the write fails, nothing of the step stays.
  @_spi(Backend) public func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R)
    async throws -> R
  {
    try await blocking.run { [self] in
      let recording = feed.withLock { $0.recording }
      // A migration step's rows, written with the step in the same file.
      var payload: [UInt8]?
      return try mutate(replaying: false, writing: true, recorded: { payload }) { tables, cache in
        let (result, changed, changes) = try tables.edit(recordingChanges: recording, body)
        payload = changes?.encoded()
        // An edit that only read (the record of migrations, for a listing or a rehearsal)
        // leaves the file as it is.
        if changed { cache = [:] }
        return (changed ? 1 : 0, changed, result)
      }
    }
  }

  /// Writes unsaved changes now, whatever the persistence policy.
  public func persist() async throws {
    try await blocking.run { [self] in try persistNow() }
  }

  private func persistNow() throws {
    try writer.withLock { state in
      guard state.lock != nil else { throw closedError() }
      guard state.isDirty else { return }
      try Self.write(&state, to: file, format: format, feed: feed.withLock { $0 }, logger: logger)
    }
  }

  /// Writes unsaved changes and releases the file. Closing twice is harmless.
  ///
  /// The store is closed and its lock released also when writing the unsaved changes fails;
  /// the error then says so, and the file holds the last state written.
  public func close() async throws {
    try await blocking.run { [self] in try closeNow() }
  }

  private func closeNow() throws {
    try writer.withLock { state in
      guard let lock = state.lock else { return }
      defer {
        state.lock = nil
        state.working = InMemoryTables()
        state.cache = [:]
        published.withLock {
          $0.isOpen = false
          $0.tables = InMemoryTables()
        }
        file.unlock(lock)
      }
      if state.isDirty {
        try Self.write(&state, to: file, format: format, feed: feed.withLock { $0 }, logger: logger)
      }
    }
  }

  func snapshot() throws -> InMemoryTables {
    let current = published.withLock { $0 }
    guard current.isOpen else { throw closedError() }
    return current.tables
  }

  func closedError() -> CofferError {
    CofferError(.closed, "This store was closed. Open it again to use it.", store: name, path: path)
  }
}

extension PlistBackend: QueuedWrites {
  package var writeQueue: BlockingQueue { blocking }
}

// The optional abilities whose methods are above.
@_spi(Backend) extension PlistBackend: SnapshotReading, SchemaEditing {}

// The SPI conformance: apps reach a backend only through `Store`.
@_spi(Backend) extension PlistBackend: StorageBackend {}
