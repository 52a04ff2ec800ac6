@_spi(Backend) import Coffer
import CofferSQL
import Logging
import PostgresNIO

@_spi(Backend) extension PostgresBackend: SchemaEditing {
  /// Runs `body` in one transaction on a connection of its own, with a ``Coffer/SchemaEditor``
  /// over the store's tables and its `coffer_migrations` log, on a thread of its own (the body
  /// is synchronous; each statement blocks that thread, never the Swift concurrency pool's or
  /// an event loop's).
  ///
  /// The transaction first takes the advisory lock that preparing the store takes too, so
  /// editors and prepares in every process take turns: an editor that waited sees what the one
  /// before it committed, its log included. In this process, batches wait for the step as they
  /// wait for a schema change. DDL is transactional in PostgreSQL: a body that throws leaves
  /// tables, catalog and log as they were. A relabel renames the table, its columns, indexes
  /// and primary key in PostgreSQL's catalogs and touches no row.
  public func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R) async throws -> R {
    try checkOpen()
    let ledger = PostgresEditLedger()
    // After a commit or a rollback alike: statements prepared during the step name tables that
    // may now have other columns.
    defer { ledger.retireStatements() }
    return try await gate.exclusive {
      let result = try await pool.withConnection(while: "running a migration step", onItsEventLoop: false) {
        connection in
        do {
          try await run("BEGIN", on: connection)
          try await lockStore(on: connection)
          try await allowWrites(on: connection)
        } catch {
          if !PostgresFailure.isConnectionLoss(error), !connection.isClosed {
            _ = try? await run("ROLLBACK", on: connection)
          }
          throw failure.error(error, while: "starting a migration step")
        }
        let link = PostgresEditLink(
          connection: connection, executor: pool.executor(for: connection.eventLoop), failure: failure)
        do {
          let value = try await BlockingQueue(label: "coffer.postgres.migration").run { [self] in
            let editor = PostgresSchemaEditor(
              backend: self, connection: connection, link: link, ledger: ledger)
            defer { editor.isOpen = false }
            let value = try body(editor)
            try editor.finish()
            return value
          }
          do {
            try await run("COMMIT", on: connection)
          } catch {
            throw failure.error(error, while: "committing a migration step")
          }
          return value
        } catch {
          if !PostgresFailure.isConnectionLoss(error), !connection.isClosed {
            _ = try? await run("ROLLBACK", on: connection)
          }
          throw error
        }
      }
      let changed = ledger.publish(into: tables)
      if feed.knownOn.withLock({ $0 }) { feed.signal.notify() }
      if changed > 0 {
        logger.info("Ran a migration step", metadata: ["coffer.changedEntities": .stringConvertible(changed)])
      }
      return result
    }
  }
}

/// What a migration step's editor changed, kept where the backend finds it after the body
/// ran on its own thread: the tables whose prepared statements must go, and the entities to
/// publish again after the commit.
final class PostgresEditLedger: Sendable {
  private struct State {
    /// The quoted, schema-qualified names of the tables created, dropped or renamed.
    var tables: Set<String> = []
    /// Each changed entity's table now, or `nil` when it is gone.
    var entities: [String: PostgresTable?] = [:]
  }

  private let state = LockedState(State())

  /// Notes that an entity changed: it now has `table`, or none when `removed`. Retires the
  /// statements that name the table at once, so the step's own statements are prepared afresh.
  func changed(_ entity: String, to table: PostgresTable, removed: Bool = false) {
    PostgresStatements.retire(mentioning: table.table)
    state.withLock { state in
      state.tables.insert(table.table)
      state.entities[entity] = removed ? PostgresTable?.none : table
    }
  }

  /// Retires the statements that name any table the step changed.
  func retireStatements() {
    for table in state.withLock({ $0.tables }) { PostgresStatements.retire(mentioning: table) }
  }

  /// Publishes the changed entities' tables (and forgets the removed ones); returns how many
  /// entities changed.
  func publish(into tables: LockedState<[String: PostgresTable]>) -> Int {
    let entities = state.withLock { $0.entities }
    tables.withLock { tables in
      for (entity, table) in entities { tables[entity] = table }
    }
    return entities.count
  }
}
