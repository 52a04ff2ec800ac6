@_spi(Backend) import Coffer
import Foundation
import Logging

extension PlistBackend {
  /// Applies a change as a left-right pair: first to the writer's own copy of the tables, in
  /// place; then, once the file is written as the policy says, that copy is published to
  /// readers and the change is replayed on the previous published copy, which becomes the
  /// writer's copy. Readers never see a change before it is complete (and, with the immediate
  /// policy, on disk), and no commit copies every row.
  ///
  /// `change` gets the tables and, on its first run, the row cache (`nil` on the replay). It
  /// returns how many operations it applied (they count towards
  /// ``Persistence/everyChanges(_:)``) and whether it changed anything at all. With
  /// `replaying` false, or when it changed half the rows or more, the change runs once and the
  /// writer shares the published copy instead (for changes that must not run twice, and those
  /// that would cost more to replay than the copy its next change makes); with `writing` true
  /// the file is written whatever the policy. `recorded` gives, once the change ran, the row
  /// changes it made for the change feed (`nil`: nothing to record): they are written in the
  /// same file as the rows, and appended to the feed when the tables are published.
  func mutate<R>(
    replaying: Bool = true, writing: Bool = false, recorded: () -> [UInt8]? = { nil },
    _ change: (inout InMemoryTables, inout [String: [Value: EncodedRow]]?) throws -> (
      operations: Int, changed: Bool, result: R
    )
  ) throws -> R {
    try writer.withLock { state in
      guard state.lock != nil else { throw closedError() }
      var cache: [String: [Value: EncodedRow]]? = state.cache
      state.cache = [:]
      let outcome: (operations: Int, changed: Bool, result: R)
      do {
        outcome = try change(&state.working, &cache)
      } catch {
        state.cache = cache ?? [:]
        throw error
      }
      state.cache = cache ?? [:]
      guard outcome.changed else { return outcome.result }
      let (wasDirty, wasUnsaved) = (state.isDirty, state.unsavedOperations)
      state.unsavedOperations += outcome.operations
      state.isDirty = true
      let payload = recorded()
      let micros = Value.microseconds(since1970: Date())
      /// The feed the file is to hold: with this change's batch.
      func written() -> RecordedChangeLog {
        var written = feed.withLock { $0 }
        if let payload { _ = written.append(payload, at: micros) }
        return written
      }
      do {
        if writing {
          try Self.write(&state, to: file, format: format, feed: written(), logger: logger)
        } else {
          try writeIfDue(&state, operations: outcome.operations, feed: written)
        }
      } catch {
        // The file still holds the published state: go back to it, and to whether that state
        // had anything unsaved, so that closing does not write a change that never happened.
        state.working = published.withLock { $0.tables }
        state.cache = [:]
        (state.isDirty, state.unsavedOperations) = (wasDirty, wasUnsaved)
        throw error
      }
      var previous = published.withLock { published in
        let previous = published.tables
        published.tables = state.working
        return previous
      }
      if let payload {
        let retention = retention.withLock { $0 }
        feed.withLock { feed in
          let sequence = feed.append(payload, at: micros)
          if let trim = retention.trim(afterCommitting: sequence, at: micros) { feed.trim(trim) }
        }
        signal.notify()
      }
      let rowCount = state.working.schemas.keys.reduce(0) { $0 + state.working.rowCount($1) }
      state.working = InMemoryTables()
      var noCache: [String: [Value: EncodedRow]]? = nil
      if !replaying || 2 * outcome.operations >= rowCount {
        // The writer shares the published tables until its next change copies them: what it
        // changes, entity by entity. A change of half the rows or more (a bulk insert into a
        // new store) would cost as much to replay as that copy, and hold a second copy of
        // every table at once.
        state.working = published.withLock { $0.tables }
      } else if (try? change(&previous, &noCache)) != nil {
        state.working = previous
      } else {
        state.working = published.withLock { $0.tables }
      }
      return outcome.result
    }
  }

  private func writeIfDue(_ state: inout WriterState, operations: Int, feed: () -> RecordedChangeLog) throws {
    switch configuration.persistence {
    case .immediate:
      try Self.write(&state, to: file, format: format, feed: feed(), logger: logger)
    case .everyChanges(let limit):
      if operations > 0, state.unsavedOperations >= max(1, limit) {
        try Self.write(&state, to: file, format: format, feed: feed(), logger: logger)
      }
    case .interval(let delay):
      if !state.timerScheduled {
        state.timerScheduled = true
        Task { [weak self] in
          try? await Task.sleep(for: delay)
          try? await self?.persistScheduled()
        }
      }
    case .manual:
      break
    }
  }

  private func persistScheduled() async throws {
    writer.withLock { $0.timerScheduled = false }
    try await persist()
  }

  /// Re-encodes the rows a batch touched; rows it removed leave the cache.
  func updateCache(
    _ cache: inout [String: [Value: EncodedRow]]?, tables: InMemoryTables, for changes: ChangeSet
  ) {
    var swept: Set<String> = []
    for operation in changes.operations {
      let entity = operation.entity
      guard let schema = tables.schemas[entity] else { continue }
      let id: Value
      switch operation {
      case .insert(_, let row), .update(_, let row), .upsert(_, let row):
        // The row has the layout it was made for, which may place its id elsewhere.
        id = row[(changes.layouts[entity] ?? schema).idPosition]
      case .delete(_, let deleted): id = deleted
      case .insertMany:
        // New rows, never cached: writing the file encodes rows missing from the cache.
        continue
      case .deleteMatching:
        swept.insert(entity)
        continue
      case .updateMatching:
        // Any row may have changed: the entity's rows are encoded again when the file is written.
        cache?[entity] = nil
        continue
      }
      if let stored = tables.row(of: entity, id: id) {
        cache?[entity, default: [:]][id] = RowFragments.encode(stored, schema: schema, format: format)
      } else {
        cache?[entity]?[id] = nil
      }
    }
    for entity in swept {
      guard let cached = cache?[entity] else { continue }
      cache?[entity] = cached.filter { tables.row(of: entity, id: $0.key) != nil }
    }
  }

  /// Writes the writer's tables, and the change feed when the store records one, to the file,
  /// encoding rows missing from the cache.
  static func write(
    _ state: inout WriterState, to file: StoreFile, format: Format, feed: RecordedChangeLog, logger: Logger
  ) throws {
    var entities: [StoreWriter.Entity] = []
    for (name, schema) in state.working.schemas.sorted(by: { $0.key < $1.key }) {
      var cached = state.cache[name] ?? [:]
      state.cache[name] = nil
      if cached.count != state.working.rowCount(name) {
        cached.reserveCapacity(state.working.rowCount(name))
        for row in state.working.allRows(name) where cached[row[schema.idPosition]] == nil {
          cached[row[schema.idPosition]] = RowFragments.encode(row, schema: schema, format: format)
        }
      }
      state.cache[name] = cached
      entities.append(StoreWriter.Entity(schema: schema, rows: cached.values))
    }
    var bytes = 0
    let migrations = state.working.migrations
    try file.replace { write in
      try StoreWriter.write(entities, migrations: migrations, feed: feed, format: format) { piece in
        try write(piece)
        bytes += piece.count
      }
    }
    logger.debug(
      "Wrote the property-list file",
      metadata: [
        "coffer.bytes": .stringConvertible(bytes),
        "coffer.entities": .stringConvertible(entities.count),
        "coffer.unsavedOperations": .stringConvertible(state.unsavedOperations),
      ])
    state.unsavedOperations = 0
    state.isDirty = false
  }
}
