@_spi(Backend) import Coffer
import CofferSQL
import Foundation
import NIOCore
import PostgresNIO

extension PostgresBackend {
  /// Creates the feed's tables and guard function when missing and puts the guard on every
  /// entity's table, in one transaction under the store's advisory lock (which entities are
  /// prepared under too, so a table created meanwhile gets its guard as it is made).
  @_spi(Backend) public func startRecordingChanges(retention: ChangeRetention) async throws {
    try checkOpen()
    feed.retention.withLock { $0 = retention }
    if feed.knownOn.withLock({ $0 }) { return }
    do {
      try await gate.exclusive {
        try await pool.withConnection(while: "turning the change feed on") { connection in
          try await transaction(on: connection) {
            try await lockStore(on: connection)
            try await ensureCatalog(on: connection)
            let answer = try await run(PostgresChangeFeed.hasLZ4SQL, on: connection).first
            let cell = answer?.first { _ in true }
            let lz4 = try cell.map { try PostgresValues.read($0.bytes, as: .bool) } == .bool(true)
            for statement in feed.createStatements(lz4: lz4) { try await run(statement, on: connection) }
            for record in try await catalog.records(on: connection).values {
              let table = catalog.namespace + "." + SQLIdentifier.quoted(record.tableName)
              for statement in feed.guardStatements(on: table) { try await run(statement, on: connection) }
            }
          }
        }
      }
    } catch {
      throw failure.error(error, while: "turning the change feed on")
    }
    feed.knownOn.withLock { $0 = true }
  }

  /// Whether the feed is on, asked of the server until it is known to be.
  func changeFeedIsOn(on connection: PostgresConnection) async throws -> Bool {
    if feed.knownOn.withLock({ $0 }) { return true }
    let rows = try await connection.send(feed.existsQuery, logger: .disabled).collect()
    guard let cell = rows.first?.first(where: { _ in true }),
      case .bool(true) = try PostgresValues.read(cell.bytes, as: .bool)
    else { return false }
    feed.knownOn.withLock { $0 = true }
    return true
  }

  /// Puts the feed's guard on a table just made (`table` quoted), when the feed is on; inside
  /// the transaction that makes it.
  func guardIfRecording(_ table: String, on connection: PostgresConnection) async throws {
    guard try await changeFeedIsOn(on: connection) else { return }
    for statement in feed.guardStatements(on: table) { try await run(statement, on: connection) }
  }

  /// Says, in a transaction that writes entity tables outside a batch (evolving or migrating
  /// them), that it may: the feed's guard lets it through.
  func allowWrites(on connection: PostgresConnection) async throws {
    try await run("SELECT set_config('coffer.recording', 'on', true)", on: connection)
  }

  /// The feed's bounds, read in one statement.
  @_spi(Backend) public func changeFeedBounds() async throws -> ChangeFeedBounds? {
    try checkOpen()
    do {
      return try await pool.withConnection(while: "reading the change feed", reading: true) { connection in
        guard try await changeFeedIsOn(on: connection) else { return nil }
        let rows = try await PostgresStatements.rows(
          feed.boundsSQL, PostgresBindings(), on: connection, logger: .disabled)
        var cells = rows.first?.makeIterator()
        guard let first = cells?.next(), let second = cells?.next(),
          case .int(let trimmed) = try PostgresValues.read(first.bytes, as: .int),
          case .int(let last) = try PostgresValues.read(second.bytes, as: .int)
        else { return ChangeFeedBounds(trimmedThrough: 0, last: 0) }
        return ChangeFeedBounds(trimmedThrough: UInt64(max(0, trimmed)), last: UInt64(max(0, last)))
      }
    } catch {
      throw failure.surfaced(error, while: "reading the change feed")
    }
  }

  /// The batches after `sequence`, read with the trimmed bound in one statement (one snapshot).
  @_spi(Backend) public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]
  {
    try checkOpen()
    // With reads on standbys, what a reader does after reading batches (an observer's query)
    // must see them: the log position read after them raises the standbys' floor, as a commit
    // marker does.
    let writes = pool.writesEnded.withLock { $0 }
    do {
      let (batches, position) = try await pool.withConnection(
        while: "reading the change feed", reading: true
      ) { connection in
        guard try await changeFeedIsOn(on: connection) else { throw CofferError.changeFeedOff(store: name) }
        var binds = PostgresBindings(capacity: 2)
        binds.append(.int(Int64(clamping: sequence)), as: .int)
        binds.append(.int(Int64(max(limit, 1))), as: .int)
        var batches: [RecordedChanges] = []
        var trimmed: UInt64 = 0
        try await PostgresStatements.run(feed.readSQL, binds, on: connection, logger: .disabled) { row in
          var cells = row.makeIterator()
          guard let bound = cells.next(), let number = cells.next(), let time = cells.next(),
            let payload = cells.next(), var numberBytes = number.bytes, var timeBytes = time.bytes,
            let payloadBytes = payload.bytes
          else {
            if let bound = row.first(where: { _ in true }),
              case .int(let through) = try PostgresValues.read(bound.bytes, as: .int)
            {
              trimmed = UInt64(max(0, through))
            }
            return
          }
          if batches.isEmpty, case .int(let through) = try PostgresValues.read(bound.bytes, as: .int) {
            trimmed = UInt64(max(0, through))
          }
          guard let number = numberBytes.readInteger(as: Int64.self),
            let micros = timeBytes.readInteger(as: Int64.self)
          else {
            throw CofferError(
              .corruptStore,
              "The change feed's table holds a malformed row. Restore the store from a backup.",
              store: name)
          }
          batches.append(
            RecordedChanges(
              sequence: UInt64(max(0, number)), committedAt: micros,
              payload: Array(payloadBytes.readableBytesView)))
        }
        if sequence < trimmed {
          throw CofferError.changesTrimmed(after: sequence, trimmedThrough: trimmed, store: name)
        }
        var position: UInt64?
        if standbyReads != nil, !batches.isEmpty { position = try await logPosition(on: connection) }
        return (batches, position)
      }
      if let position { standbyReads?.saw(position, after: writes) }
      return batches
    } catch let error as CofferError {
      throw error
    } catch {
      throw failure.surfaced(error, while: "reading the change feed")
    }
  }

  /// Trims the feed in one statement.
  @_spi(Backend) public func trimChanges(_ trim: ChangeTrim) async throws {
    try checkOpen()
    do {
      try await pool.withConnection(while: "trimming the change feed") { connection in
        guard try await changeFeedIsOn(on: connection) else { throw CofferError.changeFeedOff(store: name) }
        let (sql, binds) = feed.trimQuery(trim)
        _ = try await PostgresStatements.rows(sql, binds, on: connection, logger: .disabled)
      }
    } catch {
      throw failure.error(error, while: "trimming the change feed")
    }
  }

  /// Waits for this process's next commit, or for the notification of another process's
  /// (`LISTEN` on a connection of its own, outside the pool), looking at the feed anyway every
  /// ``PostgresChangeFeed/poll`` in case a notification was lost.
  @_spi(Backend) public func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    startListening()
    try await feed.signal.waitForChanges(after: sequence, timeout: timeout, poll: PostgresChangeFeed.poll) {
      try await changeFeedBounds()
    }
  }

  /// Starts the task that listens for the store's commits, once.
  private func startListening() {
    feed.listener.withLock { listener in
      guard listener == nil else { return }
      listener = Task { [weak self] in
        while !Task.isCancelled {
          guard let self else { return }
          await self.listenOnce()
          try? await Task.sleep(for: .milliseconds(200))
        }
      }
    }
  }

  /// Opens a connection, listens on the feed's channel until the connection is lost or the
  /// task is cancelled, and closes it. Each notification wakes this process's followers; so
  /// does the start, for commits made while no connection listened.
  private func listenOnce() async {
    guard let connection = try? await pool.open(id: 0, while: "listening for the change feed") else { return }
    defer { connection.close().whenComplete { _ in withExtendedLifetime(connection) {} } }
    let signal = feed.signal
    _ = try? await connection.listen(on: feed.channel) { notifications in
      signal.notify()
      for try await _ in notifications { signal.notify() }
    }
  }

  /// Stops listening, when the store closes.
  func stopListening() {
    feed.listener.withLock { listener in
      listener?.cancel()
      listener = nil
    }
  }
}

@_spi(Backend) extension PostgresBackend: ChangeRecording {}
