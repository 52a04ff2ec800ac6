import CSQLite
@_spi(Backend) import Coffer
@_spi(Backend) import CofferSQL
import Foundation
import Logging

/// A store in one SQLite database file, readable by anyone with the `sqlite3` tool.
///
/// Each entity is a table with one typed column per field (nested documents are one JSON text
/// column); indexes and unique constraints come from the schema. The database runs in WAL mode
/// with one writer connection and a pool of readers, so queries never wait for a batch being
/// written; several processes may use the file at once.
///
/// ```swift
/// let store = try await Store.open(url: "sqlite:///var/app/db.sqlite", registry: .builtIn)
/// ```
///
/// Docs/SQLite.md describes the table layout, the options and the concurrency model.
public final class SQLiteBackend {
  /// `sqlite:///ABSOLUTE/PATH` or `sqlite:RELATIVE/PATH`.
  public let name: String
  /// Reopenable, durable (unless `synchronous=off`), multi-process, atomic across entities, evolving,
  /// migrating.
  @_spi(Backend) public let capabilities: BackendCapabilities
  /// How the store was opened.
  public let configuration: Configuration
  /// The database file's path.
  public let path: String

  /// The writer connection; every batch and schema change runs under this lock (`nil` once closed).
  let writer: LockedState<SQLiteConnection?>
  /// The thread batches, schema changes and closing run on, off the Swift concurrency pool.
  let blocking: BlockingQueue
  /// The batches waiting for the writer (see ``SQLiteGroupCommit``).
  let groupCommit = SQLiteGroupCommit()
  /// Where the backend logs opening, schema changes and closing.
  let logger: Logger
  /// Makes a span of each statement, under the span of the store call that sent it; `nil` when
  /// no tracer was in force as the store opened.
  let statementTracer: StatementTracer?
  let readers: SQLiteReaderPool
  /// The connection whose `PRAGMA data_version` tells of commits, taken from the readers the
  /// first time an observer asks (see ``commitMarker()``).
  let watcher = LockedState<SQLiteConnection?>(nil)
  /// The prepared entities, by name, and the serial the next one published gets.
  let catalog = LockedState(Catalog())
  /// The change feed's state in this handle (see `SQLiteBackend+Changes.swift`).
  let feed = SQLiteChangeFeed()

  struct Catalog: Sendable {
    var tables: [String: SQLiteTable] = [:]
    var nextSerial = 1
    /// Whether a committed transaction found or made the log of migrations. No code drops
    /// it, so a schema editor need not look for it again.
    var hasMigrationLog = false
  }

  /// Opens (or creates) the database at `path`.
  ///
  /// - Throws: ``Coffer/CofferError/Code/corruptStore`` for a file that is not a SQLite
  ///   database, is damaged or was written by a newer Coffer (the file is left untouched);
  ///   ``Coffer/CofferError/Code/io`` when it or its directory cannot be written;
  ///   ``Coffer/CofferError/Code/locked`` when another process holds it past the busy timeout.
  public init(path: String, configuration: Configuration = Configuration(), logger: Logger? = nil) throws {
    let name = path.hasPrefix("/") ? "sqlite://\(path)" : "sqlite:\(path)"
    self.name = name
    self.path = path
    self.configuration = configuration
    self.logger = (logger ?? .disabled).forStore(name)
    var capabilities: BackendCapabilities = [
      .reopenable, .multiProcess, .crossEntityTransactions, .schemaEvolution, .preconditions,
      .observesOtherHandles,
    ]
    if configuration.synchronous != .off { capabilities.insert(.durable) }
    self.capabilities = capabilities

    try Self.refuseEmptyFile(path, store: name)
    Self.createOwnerOnly(path)
    let catalogCache = SQLiteCatalogCache()
    let connection = try SQLiteConnection(
      path: path, storeName: name, configuration: configuration, catalogCache: catalogCache)
    let statementLog = configuration.logStatements ? StatementLog(logger: self.logger) : nil
    let statementTracer = StatementTracer.current(system: "sqlite", store: name)
    self.statementTracer = statementTracer
    connection.watchStatements(log: statementLog, tracer: statementTracer, onWriter: true)
    try Self.configureWriter(connection, configuration)
    self.writer = LockedState(connection)
    self.blocking = BlockingQueue(label: "coffer.sqlite.writer")
    let opener: @Sendable () throws -> SQLiteConnection = {
      let reader = try SQLiteConnection(
        path: path, storeName: name, configuration: configuration, catalogCache: catalogCache)
      reader.watchStatements(log: statementLog, tracer: statementTracer, onWriter: false)
      try reader.execute("PRAGMA query_only = ON")
      return reader
    }
    self.readers = SQLiteReaderPool(
      keep: configuration.readers, open: opener,
      closed: {
        CofferError(.closed, "This store was closed. Open it again to use it.", store: name, path: path)
      })
    self.logger.debug(
      "Opened the SQLite database",
      metadata: [
        "coffer.path": .string(path), "coffer.synchronous": .string("\(configuration.synchronous)"),
        "coffer.readers": .stringConvertible(configuration.readers),
      ])
  }

  /// Refuses an existing file of zero bytes, which SQLite would take for a new database and
  /// write over: a store emptied by another program is damage to report, not a place to start
  /// again. A zero-byte file whose write-ahead log holds pages is sound (nothing was moved into
  /// the file yet) and opens as usual, and so does a file that another process is creating
  /// (it stops being empty within a moment). Blocks for up to 0.2 s on an empty file.
  private static func refuseEmptyFile(_ path: String, store: String) throws {
    func size(_ file: String) -> Int? {
      (try? FileManager.default.attributesOfItem(atPath: file))?[.size] as? Int
    }
    // A process creating the store right now has an empty file for a moment: give it time.
    for _ in 0..<20 {
      guard size(path) == 0, (size(path + "-wal") ?? 0) == 0 else { return }
      usleep(10_000)
    }
    throw CofferError(
      .corruptStore,
      "The database file is empty (0 bytes): another program emptied it, or the machine stopped while the "
        + "store was being created, before its first commit. It was left untouched. Restore it from a backup, "
        + "or, if nothing was ever stored there, delete the file to start a new store there.",
      store: store, path: path)
  }

  /// Creates a new database file readable and writable by its owner only (a store may hold
  /// private data); SQLite gives its WAL and shared-memory files the same permissions. An
  /// existing file, or a special name such as `:memory:`, is left to SQLite.
  private static func createOwnerOnly(_ path: String) {
    guard !path.isEmpty, !path.hasPrefix(":"), !FileManager.default.fileExists(atPath: path) else { return }
    // When this fails (another process made the file first, or the directory is missing),
    // SQLite's own open reports what matters.
    createExclusively(path, mode: 0o600)
  }

  private static func configureWriter(_ connection: SQLiteConnection, _ configuration: Configuration) throws {
    // Reading the schema first turns a foreign or damaged file into an error before anything
    // could be written to it.
    _ = try connection.text("SELECT count(*) FROM sqlite_master")
    if connection.isReadOnly {
      throw SQLiteFailure.error(
        code: SQLITE_READONLY, message: "read-only database", path: connection.path,
        store: connection.storeName, while: "opening")
    }
    let mode = try connection.text("PRAGMA journal_mode = WAL")
    guard mode?.lowercased() == "wal" else {
      throw CofferError(
        .io,
        "SQLite could not switch the database to WAL mode (it reported '\(mode ?? "nothing")'); the file "
          + "system may not support the shared memory WAL needs. Put the database on a local disk.",
        store: connection.storeName, path: connection.path)
    }
    try connection.execute("PRAGMA synchronous = \(configuration.synchronous.pragma)")
    if let version = try connection.text("PRAGMA user_version"), let number = Int(version),
      number > SQLiteCatalog.formatVersion
    {
      throw CofferError(
        .corruptStore,
        "The database was written by a newer Coffer (format \(number); this one reads up to "
          + "\(SQLiteCatalog.formatVersion)). It was left untouched: open it with a newer Coffer.",
        store: connection.storeName, path: connection.path)
    }
  }

  /// Runs `body` on `pinned` (a snapshot's connection, in its read transaction) or, when it is
  /// `nil`, on a reader of the pool.
  func withReader<R>(_ pinned: SQLiteConnection?, _ body: (SQLiteConnection) throws -> R) throws -> R {
    if let pinned { return try body(pinned) }
    return try readers.withReader(body)
  }

  /// Runs the query on a reader connection and hands over each row as the statement steps.
  /// A query whose ties are put in order after reading (its last sort key is descending) is
  /// fetched whole first.
  /// A lookup by id (see ``Query/lookedUpIDs(in:)``) steps one cached statement per id.
  @_spi(Backend) public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try read(query, on: nil, visit)
  }

  /// ``read(_:_:)`` on `pinned`, or on a pooled reader when it is `nil`.
  func read(_ query: Query, on pinned: SQLiteConnection?, _ visit: (any StoredFields) throws -> Void) throws {
    let table = try table(query.entity)
    if let id = query.lookedUpID(in: table.schema) {
      return try read(table, ids: CollectionOfOne(id), as: query.layout, on: pinned, visit)
    }
    if let ids = query.lookedUpIDs(in: table.schema) {
      return try read(table, ids: ids, as: query.layout, on: pinned, visit)
    }
    let built = try SQLiteSelect(query, in: table)
    // Rows in the layout the reader decodes with, should the entity have been prepared with
    // another schema since it validated the query.
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    if built.reversedTies != nil {
      let rows = try withReader(pinned) { try $0.rows(of: query, built: built, in: table) }
      if let view {
        for row in rows { try visit(view.showing(RowFields(row))) }
      } else {
        try RowFields.handOver(rows, to: visit)
      }
      return
    }
    try readSelect(built.query, of: table, through: view, on: pinned, visit)
  }

  /// Runs a select of the table's columns on a pooled reader (see ``SQLReadingBackend``).
  package func readSelect(
    _ statement: SQLiteQuery, of table: SQLiteTable, through view: ReshapedFields?,
    _ visit: (any StoredFields) throws -> Void
  ) async throws {
    try readSelect(statement, of: table, through: view, on: nil, visit)
  }

  /// Runs a select of the table's columns on `pinned`, or on a pooled reader when it is `nil`,
  /// handing over each row as the statement steps.
  func readSelect(
    _ select: SQLiteQuery, of table: SQLiteTable, through view: ReshapedFields?, on pinned: SQLiteConnection?,
    _ visit: (any StoredFields) throws -> Void
  ) throws {
    try withReader(pinned) { reader in
      let statement = try reader.statement(select.sql)
      try statement.withBindings(select.bindings) {
        let fields = SQLiteFields(statement: statement, kinds: table.kinds)
        if let view {
          while try statement.stepReading() { try visit(view.showing(fields)) }
        } else {
          while try statement.stepReading() { try visit(fields) }
        }
      }
    }
  }

  /// Looks each id up with one cached statement, in one read transaction, handing over each
  /// row found as the statement steps.
  private func read(
    _ table: SQLiteTable, ids: some Collection<Value>, as layout: EntitySchema?, on pinned: SQLiteConnection?,
    _ visit: (any StoredFields) throws -> Void
  ) throws {
    if ids.isEmpty { return }
    let view = try RowReshaper(reading: table.schema, as: layout, store: name).makeView()
    try withReader(pinned) { reader in
      let statement = try reader.statement(for: table, .get)
      let stepping = SQLiteFields(statement: statement, kinds: table.kinds)
      let fields = view?.showing(stepping) ?? stepping
      // A pinned connection is in its read transaction already.
      let several = ids.count > 1 && pinned == nil
      if several { try reader.run("BEGIN") }
      defer { if several { try? reader.run("COMMIT") } }
      for id in ids {
        try statement.withBindings([id]) {
          while try statement.stepReading() { try visit(fields) }
        }
      }
    }
  }

  /// Counts with `count(*)` on a reader.
  @_spi(Backend) public func count(_ query: Query) async throws -> Int {
    try count(query, on: nil)
  }

  /// ``count(_:)`` on `pinned`, or on a pooled reader when it is `nil`.
  func count(_ query: Query, on pinned: SQLiteConnection?) throws -> Int {
    let table = try table(query.entity)
    let built = try SQLiteQuery.count(query.filter, in: table.layout)
    return try withReader(pinned) { reader in
      let statement = try reader.statement(built.sql)
      return try statement.withBindings(built.bindings) {
        try statement.stepReading() ? Int(statement.int(at: 0)) : 0
      }
    }
  }

  /// Runs `body` on a reader of its own inside one read transaction, begun (and its state
  /// fixed) before `body` starts and ended when it returns.
  @_spi(Backend) public func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws
    -> R
  {
    let reader = try readers.checkOut()
    defer { readers.checkIn(reader) }
    // The first read of a transaction fixes the state it sees: read now, not at the first query.
    try reader.run("BEGIN")
    do {
      _ = try reader.text("SELECT count(*) FROM sqlite_master")
      let result = try await body(SQLiteSnapshot(backend: self, reader: reader))
      try reader.run("COMMIT")
      return result
    } catch {
      try? reader.run("ROLLBACK")
      throw error
    }
  }

  /// `PRAGMA data_version` on a connection kept for it: it changes when any other connection —
  /// this store's writer, another handle, another process — commits.
  public func commitMarker() async throws -> UInt64? {
    try checkOpen()
    return try watcher.withLock { watcher in
      let connection = try watcher ?? readers.checkOut()
      watcher = connection
      return try connection.text("PRAGMA data_version").flatMap { UInt64($0) }
    }
  }

  /// Closes every connection; SQLite checkpoints the log into the database file.
  public func close() async throws {
    try await blocking.run { [self] in
      writer.withLock { $0 = nil }
      watcher.withLock { $0 = nil }
      readers.close()
    }
    logger.debug("Closed the SQLite database")
  }

  /// The prepared entity with a name.
  package func table(_ entity: String) throws -> SQLiteTable {
    if let table = catalog.withLock({ $0.tables[entity] }) { return table }
    try checkOpen()
    throw CofferError.neverPrepared(entity, store: name, inBatch: false)
  }

  func checkOpen() throws {
    guard writer.withLock({ $0 != nil }) else { throw closedError() }
  }

  func closedError() -> CofferError {
    CofferError(.closed, "This store was closed. Open it again to use it.", store: name, path: path)
  }
}

/// Creates an empty file that must not exist yet (never through a symbolic link) with the
/// given permissions; does nothing when it cannot.
private func createExclusively(_ path: String, mode: mode_t) {
  let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
  if descriptor >= 0 { close(descriptor) }
}

extension SQLiteConnection {
  /// The rows of a query built as `built`, with runs of ties put back in id order when the
  /// SQL read them reversed.
  func rows(of query: Query, built: SQLiteSelect, in table: SQLiteTable) throws -> [Row] {
    let rows = try statement(built.sql).rows(built.parameters, kinds: table.kinds)
    guard let positions = built.reversedTies else { return rows }
    if SQLiteSelect.mayCutTies(rows, query, positions) {
      var whole = query
      whole.limit = nil
      let all = try SQLiteSelect(whole, in: table)
      return SQLiteSelect.orderedSlice(
        try statement(all.sql).rows(all.parameters, kinds: table.kinds), query, positions)
    }
    return SQLiteSelect.orderedSlice(rows, query, positions)
  }

  /// The rows a query selects, in its order and slice and in its layout: what a batch's
  /// precondition or update by query reads inside the write transaction.
  func rows(of query: Query, in table: SQLiteTable, store: String) throws -> [Row] {
    let rows = try rows(of: query, built: try SQLiteSelect(query, in: table), in: table)
    let reshape = try RowReshaper(reading: table.schema, as: query.layout, store: store)
    return reshape.isIdentity ? rows : rows.map { reshape($0) }
  }
}

/// One read transaction on a reader connection the snapshot holds until it ends. A lock keeps
/// tasks that share the snapshot from using the connection at once.
struct SQLiteSnapshot: StorageSnapshot {
  let backend: SQLiteBackend
  let reader: SQLiteConnection
  let lock = NSLock()

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try lock.withLock { try backend.read(query, on: reader, visit) }
  }

  func count(_ query: Query) async throws -> Int {
    try lock.withLock { try backend.count(query, on: reader) }
  }
}

extension SQLiteBackend: QueuedWrites {
  package var writeQueue: BlockingQueue { blocking }
}

// The optional abilities whose methods are above.
@_spi(Backend) extension SQLiteBackend: SnapshotReading, CommitObserving {}

// The SPI conformance: apps reach a backend only through `Store`.
@_spi(Backend) extension SQLiteBackend: StorageBackend {}

/// First rows per value, with the SQL every engine shares.
extension SQLiteBackend: SQLReadingBackend {}
