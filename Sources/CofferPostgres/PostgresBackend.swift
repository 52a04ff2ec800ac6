@_spi(Backend) import Coffer
@_spi(Backend) import CofferSQL
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle

/// A store in a PostgreSQL database, shared by every process and machine that opens the same
/// URL.
///
/// Each entity is a table in the store's schema (`public` unless the URL says `?schema=NAME`),
/// with one typed column per field, so `psql` shows the data as the app wrote it; indexes and
/// unique constraints come from the schema, and the table `coffer_catalog` keeps each entity's
/// exact schema. A batch is one transaction, retried from scratch when the server reports a
/// serialization failure or a deadlock.
///
/// ```swift
/// // PGPASSWORD holds the password.
/// let store = try await Store.open(url: "postgres://app@db.internal:5432/chat", registry: .builtIn)
/// ```
///
/// The backend keeps a pool of connections (``Configuration/poolSize``), opened on demand and
/// reopened after the server drops one. With several servers in the URL (a primary and its
/// standbys), connections go to the one that accepts writes, and after a failover to the
/// standby that was promoted; with ``Configuration/reads`` set to `standby` or `any`, plain
/// reads go to the standbys that have replayed the store's last commit (read-your-writes).
/// Server apps that manage their services with swift-service-lifecycle can run it as a
/// `Service`: ``run()`` waits for the graceful shutdown and then closes the store.
///
/// Docs/PostgreSQL.md describes the layout, the options, concurrency and failures.
public final class PostgresBackend: Service {
  /// `postgres://USER@HOST:PORT/DATABASE[?schema=NAME]`, never with the password; every server
  /// when there are several: `postgres://USER@HOST:PORT,HOST:PORT/DATABASE`.
  public let name: String
  /// Reopenable, durable, multi-process, atomic across entities, evolving, seeing other
  /// processes' commits.
  @_spi(Backend) public let capabilities: BackendCapabilities = [
    .reopenable, .durable, .multiProcess, .crossEntityTransactions, .schemaEvolution, .preconditions,
    .observesOtherHandles,
  ]
  /// How the store was opened (its password included: do not print it).
  public let configuration: Configuration

  let logger: Logger
  let pool: PostgresConnectionPool
  /// Where plain reads go with `reads=standby|any` and several servers; `nil` otherwise.
  let standbyReads: PostgresStandbyReads?
  let failure: PostgresFailure
  let catalog: PostgresCatalog
  /// The prepared entities, by name.
  let tables = LockedState<[String: PostgresTable]>([:])
  /// Keeps this process's batches out while it evolves a table, so that no batch writes rows in
  /// a layout that is being replaced.
  let gate = SchemaGate()
  /// The change feed's state in this handle (`PostgresBackend+Changes.swift`).
  let feed: PostgresChangeFeed
  private let closed = LockedState(false)

  /// Connects to the server once, to report a bad address, password or database now rather
  /// than at the first query, and checks that the store (if there is one) is of a format this
  /// code reads.
  ///
  /// - Throws: ``Coffer/CofferError/Code/unavailable`` when nothing answers at the address (with
  ///   several servers: when none of them accepts writes),
  ///   ``Coffer/CofferError/Code/accessDenied`` for a refused login,
  ///   ``Coffer/CofferError/Code/invalidConfiguration`` for a missing database,
  ///   ``Coffer/CofferError/Code/corruptStore`` for a store written by a newer Coffer.
  public init(configuration: Configuration, logger: Logger? = nil) async throws {
    let name = configuration.storeName
    self.name = name
    self.configuration = configuration
    self.logger = (logger ?? .disabled).forStore(name)
    guard !configuration.hosts.isEmpty else {
      throw CofferError(
        .invalidConfiguration, "The PostgreSQL configuration names no server: give hosts at least one.",
        store: name)
    }
    let failure = PostgresFailure(configuration: configuration, store: name)
    self.failure = failure
    self.catalog = PostgresCatalog(schema: configuration.schema, store: name)
    self.feed = PostgresChangeFeed(schema: configuration.schema)
    self.pool = try PostgresConnectionPool(
      configuration: configuration, failure: failure, logger: self.logger)
    self.standbyReads =
      configuration.reads == .primary || configuration.hosts.count < 2
      ? nil : try PostgresStandbyReads(primary: pool, logger: self.logger)
    do {
      try await pool.withConnection(while: "opening the store") { [catalog] connection in
        guard try await catalog.exists(on: connection),
          let version = try await catalog.version(on: connection)
        else { return }
        if version > PostgresCatalog.formatVersion {
          throw CofferError(
            .corruptStore,
            "The store in schema '\(configuration.schema)' was written by a newer Coffer (format \(version); this "
              + "one reads up to \(PostgresCatalog.formatVersion)). It was left untouched: open it with a newer Coffer.",
            store: name)
        }
        // Known from the start, the feed being on costs no refused first batch.
        _ = try await changeFeedIsOn(on: connection)
      }
    } catch {
      await pool.close()
      await standbyReads?.close()
      throw failure.error(error, while: "opening the store")
    }
    self.logger.debug(
      "Opened the PostgreSQL store",
      metadata: [
        "coffer.address": .string(configuration.address), "coffer.database": .string(configuration.database),
        "coffer.schema": .string(configuration.schema),
        "coffer.pool": .stringConvertible(configuration.poolSize),
      ])
  }

  /// Reads a query's rows on a pooled connection and hands over each row as it arrives; the
  /// server streams them, so a large read holds only a few rows at a time.
  @_spi(Backend) public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try await read(query, on: nil, visit)
  }

  /// ``read(_:_:)`` on `pinned` (a snapshot's connection, in its transaction), or on a pooled
  /// connection when it is `nil`.
  func read(
    _ query: Query, on pinned: PostgresConnection?, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    let table = try table(query.entity)
    if table.readsIDsOnly(query.layout) {
      let built = try table.select(query)
      try await readRows(built.sql, built.bindings, of: table, through: nil, on: pinned, idsOnly: true, visit)
      return
    }
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    let sql: String
    var binds = PostgresBindings(capacity: 1)
    if let id = query.lookedUpID(in: table.schema) {
      binds.append(id, as: table.kinds[table.schema.idPosition])
      sql = table.byID.get
    } else if let ids = query.lookedUpIDs(in: table.schema) {
      if ids.isEmpty { return }
      binds.append(PostgresArrayParameter(values: ids, kind: table.kinds[table.schema.idPosition]))
      sql = table.getManySQL
    } else {
      let built = try table.select(query)
      (sql, binds) = (built.sql, built.bindings)
    }
    try await readRows(sql, binds, of: table, through: view, on: pinned, visit)
  }

  /// Runs a select of the table's columns on a pooled connection (see ``SQLReadingBackend``).
  package func readSelect(
    _ statement: PostgresSQL, of table: PostgresTable, through view: ReshapedFields?,
    _ visit: (any StoredFields) throws -> Void
  ) async throws {
    try await readRows(statement.sql, statement.bindings, of: table, through: view, on: nil, visit)
  }

  /// Runs a statement that selects `table`'s columns (its id column alone when `idsOnly`) and
  /// hands over each row as it arrives, through `view` when the caller reads another layout; the
  /// visitor's own error comes out unchanged, any other as the backend's error.
  func readRows(
    _ sql: String, _ binds: PostgresBindings, of table: PostgresTable, through view: ReshapedFields?,
    on pinned: PostgresConnection?, idsOnly: Bool = false, _ visit: (any StoredFields) throws -> Void
  ) async throws {
    // A read that handed over no row may run again on the primary after a standby failed it.
    var delivered = false
    do {
      try await withConnection(pinned, while: "reading \(table.schema.name)", restartable: { !delivered }) {
        connection in
        let fields = PostgresFields(kinds: idsOnly ? [table.kinds[table.schema.idPosition]] : table.kinds)
        try await PostgresStatements.run(sql, binds, on: connection, logger: logger) { row in
          try fields.load(row)
          delivered = true
          do {
            try visit(view?.showing(fields) ?? fields)
          } catch {
            throw VisitorStopped(error: error)
          }
        }
      }
    } catch let stopped as VisitorStopped {
      // The caller's own error, which stops the read: rethrown as it is, as the SPI promises.
      throw stopped.error
    } catch {
      throw failure.surfaced(error, while: "reading \(table.schema.name)", entity: table.schema.name)
    }
  }

  /// Counts with `count(*)` on the server.
  @_spi(Backend) public func count(_ query: Query) async throws -> Int {
    try await count(query, on: nil)
  }

  /// ``count(_:)`` on `pinned` (a snapshot's connection), or on a pooled connection when it is `nil`.
  func count(_ query: Query, on pinned: PostgresConnection?) async throws -> Int {
    let table = try table(query.entity)
    let built = try PostgresSQL.count(query.filter, in: table.layout)
    do {
      return try await withConnection(pinned, while: "counting \(table.schema.name)") { connection in
        let rows = try await PostgresStatements.rows(
          built.sql, built.bindings, on: connection, logger: logger)
        guard let cell = rows.first?.first(where: { _ in true }),
          case .int(let count) = try PostgresValues.read(
            cell.bytes, as: .int)
        else { return 0 }
        return Int(count)
      }
    } catch {
      throw failure.surfaced(error, while: "counting \(table.schema.name)", entity: table.schema.name)
    }
  }

  /// Closes every connection; later calls throw ``Coffer/CofferError/Code/closed``. Closing twice
  /// is harmless. Everything applied was committed on the server before `apply` returned.
  public func close() async throws {
    let wasClosed = closed.withLock { closed in
      defer { closed = true }
      return closed
    }
    if wasClosed { return }
    stopListening()
    await pool.close()
    await standbyReads?.close()
    logger.debug("Closed the PostgreSQL store")
  }

  /// Runs the store as a swift-service-lifecycle `Service`: waits until the service group
  /// shuts down gracefully (or the task is cancelled), then closes the store.
  public func run() async throws {
    try? await gracefulShutdown()
    try await close()
  }

  /// The primary's write-ahead log position, read on `connection`.
  func logPosition(on connection: PostgresConnection) async throws -> UInt64? {
    let rows = try await PostgresStatements.rows(
      PostgresStandbyReads.positionSQL, PostgresBindings(), on: connection, logger: logger)
    guard let cell = rows.first?.first(where: { _ in true }),
      case .int(let position) = try PostgresValues.read(cell.bytes, as: .int)
    else { return nil }
    return UInt64(bitPattern: position)
  }

  /// The server's write-ahead log position (`pg_current_wal_lsn()`), which moves with every
  /// commit that wrote anything — by any connection, to any database of the server. It moves
  /// with other databases' writes and the server's own upkeep too: an observer then runs its
  /// query again for nothing, never misses a commit.
  public func commitMarker() async throws -> UInt64? {
    try checkOpen()
    // Always the primary's (a standby has no log position of its own to give); with reads on
    // standbys, the reads after it wait for a standby to replay up to it (`PostgresStandbyReads`).
    let writes = pool.writesEnded.withLock { $0 }
    do {
      let marker = try await pool.withConnection(while: "reading the log position", reading: true) {
        try await logPosition(on: $0)
      }
      if let marker { standbyReads?.saw(marker, after: writes) }
      return marker
    } catch {
      throw failure.surfaced(error, while: "reading the log position")
    }
  }

  /// Runs `body` on `pinned` or, when it is `nil`, on the connection a plain read gets
  /// (``withReadConnection(while:restartable:_:)``).
  private func withConnection<R>(
    _ pinned: PostgresConnection?, while action: String, restartable: () -> Bool = { true },
    _ body: (PostgresConnection) async throws -> R
  ) async throws -> R {
    if let pinned { return try await body(pinned) }
    return try await withReadConnection(while: action, restartable: restartable, body)
  }

  /// Runs `body` with a connection of its own in one `REPEATABLE READ, READ ONLY` transaction,
  /// whose state is fixed by a first statement before `body` starts.
  @_spi(Backend) public func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws
    -> R
  {
    try checkOpen()
    do {
      return try await pool.withConnection(while: "reading a snapshot", onItsEventLoop: false, reading: true)
      { connection in
        _ = try await connection.send(
          PostgresQuery(unsafeSQL: "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY"), logger: logger
        ).collect()
        // A transaction's snapshot is taken at its first query, not at BEGIN.
        _ = try await connection.send(PostgresQuery(unsafeSQL: "SELECT 1"), logger: logger).collect()
        let result: R
        do {
          result = try await body(PostgresSnapshot(backend: self, connection: connection))
        } catch {
          await Self.rollBack(connection, logger: logger)
          // The body's own error (a cancelled task's included) comes out as it is.
          throw VisitorStopped(error: error)
        }
        _ = try await connection.send(PostgresQuery(unsafeSQL: "COMMIT"), logger: logger).collect()
        return result
      }
    } catch let stopped as VisitorStopped {
      throw stopped.error
    } catch let error as CofferError {
      throw error
    } catch {
      throw failure.surfaced(error, while: "reading a snapshot")
    }
  }

  /// Ends a snapshot's transaction after its body threw. The `ROLLBACK` is sent from a task of
  /// its own, which the body's cancellation does not reach; a connection that could not roll
  /// back is closed, so that the pool never lends it out inside the old transaction.
  static func rollBack(_ connection: PostgresConnection, logger: Logger) async {
    guard !connection.isClosed else { return }
    let rolledBack = await Task {
      (try? await connection.send(PostgresQuery(unsafeSQL: "ROLLBACK"), logger: logger).collect()) != nil
    }.value
    if !rolledBack { try? await connection.close() }
  }

  /// The prepared entity with a name.
  package func table(_ entity: String) throws -> PostgresTable {
    if let table = tables.withLock({ $0[entity] }) { return table }
    try checkOpen()
    throw CofferError.neverPrepared(entity, store: name, inBatch: false)
  }

  func checkOpen() throws {
    if closed.withLock({ $0 }) {
      throw CofferError(.closed, "This store was closed. Open it again to use it.", store: name)
    }
  }
}

/// A connection in a read-only repeatable-read transaction, held by a snapshot until it ends.
struct PostgresSnapshot: StorageSnapshot {
  let backend: PostgresBackend
  let connection: PostgresConnection

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try await backend.read(query, on: connection, visit)
  }

  func count(_ query: Query) async throws -> Int {
    try await backend.count(query, on: connection)
  }
}

/// A read's visitor threw: carries its error past the backend's own error handling, so that the
/// read rethrows it unchanged.
struct VisitorStopped: Error {
  let error: any Error
}

// The optional abilities whose methods are above.
@_spi(Backend) extension PostgresBackend: SnapshotReading, CommitObserving {}

// The SPI conformance: apps reach a backend only through `Store`.
@_spi(Backend) extension PostgresBackend: StorageBackend {}

/// First rows per value, with the SQL every engine shares.
extension PostgresBackend: SQLReadingBackend {}
