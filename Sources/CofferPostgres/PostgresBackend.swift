@_spi(Backend) import Coffer
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
/// standby that was promoted. Server apps that manage their services with
/// swift-service-lifecycle can run it as a `Service`: ``run()`` waits for the graceful shutdown
/// and then closes the store.
///
/// Docs/PostgreSQL.md describes the layout, the options, concurrency and failures.
public final class PostgresBackend: StorageBackend, Service {
  /// `postgres://USER@HOST:PORT/DATABASE[?schema=NAME]`, never with the password; every server
  /// when there are several: `postgres://USER@HOST:PORT,HOST:PORT/DATABASE`.
  public let name: String
  /// Reopenable, durable, multi-process, atomic across entities, evolving.
  public let capabilities: BackendCapabilities = [
    .reopenable, .durable, .multiProcess, .crossEntityTransactions, .schemaEvolution,
  ]
  /// How the store was opened (its password included: do not print it).
  public let configuration: Configuration

  let logger: Logger
  let pool: PostgresConnectionPool
  let failure: PostgresFailure
  let catalog: PostgresCatalog
  /// The prepared entities, by name.
  let tables = LockedState<[String: PostgresTable]>([:])
  /// Keeps this process's batches out while it evolves a table, so that no batch writes rows in
  /// a layout that is being replaced.
  let gate = SchemaGate()
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
    self.pool = try PostgresConnectionPool(
      configuration: configuration, failure: failure, logger: self.logger)
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
      }
    } catch {
      await pool.close()
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
  public func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    let table = try table(query.entity)
    let view = try RowReshaper(reading: table.schema, as: query.layout, store: name).makeView()
    let sql: String
    var binds = PostgresBindings(capacity: 1)
    if let id = query.lookedUpID(in: table.schema) {
      binds.append(id, as: table.kinds[table.schema.idPosition])
      sql = table.getSQL
    } else if let ids = query.lookedUpIDs(in: table.schema) {
      if ids.isEmpty { return }
      binds.append(PostgresArrayParameter(values: ids, kind: table.kinds[table.schema.idPosition]))
      sql = table.getManySQL
    } else {
      let built = try PostgresSQL.select(query, in: table)
      (sql, binds) = (built.sql, built.binds)
    }
    do {
      try await pool.withConnection(while: "reading \(table.schema.name)") { connection in
        let fields = PostgresFields(kinds: table.kinds)
        try await PostgresStatements.run(sql, binds, on: connection, logger: logger) { row in
          try fields.load(row)
          try visit(view?.showing(fields) ?? fields)
        }
      }
    } catch {
      throw failure.error(error, while: "reading \(table.schema.name)", entity: table.schema.name)
    }
  }

  /// Counts with `count(*)` on the server.
  public func count(_ query: Query) async throws -> Int {
    let table = try table(query.entity)
    let built = try PostgresSQL.count(query.filter, in: table)
    do {
      return try await pool.withConnection(while: "counting \(table.schema.name)") { connection in
        let rows = try await PostgresStatements.rows(built.sql, built.binds, on: connection, logger: logger)
        guard let cell = rows.first?.first(where: { _ in true }),
          case .int(let count) = try PostgresValues.read(
            cell.bytes, as: .int)
        else { return 0 }
        return Int(count)
      }
    } catch {
      throw failure.error(error, while: "counting \(table.schema.name)", entity: table.schema.name)
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
    await pool.close()
    logger.debug("Closed the PostgreSQL store")
  }

  /// Runs the store as a swift-service-lifecycle `Service`: waits until the service group
  /// shuts down gracefully (or the task is cancelled), then closes the store.
  public func run() async throws {
    try? await gracefulShutdown()
    try await close()
  }

  /// The prepared entity with a name.
  func table(_ entity: String) throws -> PostgresTable {
    if let table = tables.withLock({ $0[entity] }) { return table }
    try checkOpen()
    throw CofferError(
      .unknownEntity,
      "Entity '\(entity)' was never prepared in this store. Prepare it first (Store does this for you).",
      store: name, entity: entity)
  }

  func checkOpen() throws {
    if closed.withLock({ $0 }) {
      throw CofferError(.closed, "This store was closed. Open it again to use it.", store: name)
    }
  }
}
