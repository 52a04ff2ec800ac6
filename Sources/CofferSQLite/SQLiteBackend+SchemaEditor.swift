@_spi(Backend) import Coffer
import Logging

@_spi(Backend) extension SQLiteBackend: SchemaEditing {
  /// Runs `body` in one `BEGIN IMMEDIATE` transaction on the writer, under its lock, on the
  /// backend's own thread (never the Swift concurrency pool's), with a ``Coffer/SchemaEditor``
  /// over the tables and the `coffer_migrations` log. Batches wait; readers go on and see the
  /// store as it was until the commit.
  ///
  /// A relabel renames the table and columns in SQLite's schema and touches no row nor index:
  /// the indexes follow the renamed table and columns and keep their names (SQLite cannot
  /// rename an index; Coffer finds its indexes by what they cover). After the commit, the
  /// entities the body created, dropped or relabeled are published again, each under a new
  /// serial, so that no connection reuses a statement compiled for a table that had their
  /// name before.
  public func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R) async throws -> R {
    try checkOpen()
    return try await blocking.run { [self] in
      try withWriter { connection in
        let editor = SQLiteSchemaEditor(backend: self, connection: connection)
        defer { editor.isOpen = false }
        let result = try transaction(on: connection, while: "running a migration step") {
          let result = try body(editor)
          try editor.finish()
          return result
        }
        // Still under the writer lock, so no batch runs between the commit and this.
        let changed = editor.changed
        let tables = editor.changedTables
        catalog.withLock { catalog in
          for entity in changed { catalog.tables[entity] = tables[entity] }
          if editor.hasLog { catalog.hasMigrationLog = true }
        }
        if !changed.isEmpty {
          logger.info(
            "Ran a migration step", metadata: ["coffer.changedEntities": .stringConvertible(changed.count)])
        }
        if feed.knownOn.withLock({ $0 }) { feed.signal.notify() }
        return result
      }
    }
  }

  /// A serial no table of this backend has had: for a table the schema editor works with.
  func nextSerial() -> Int {
    catalog.withLock { catalog in
      defer { catalog.nextSerial += 1 }
      return catalog.nextSerial
    }
  }
}
