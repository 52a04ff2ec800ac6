@_spi(Backend) import Coffer
import PostgresNIO

extension PostgresStandbyReads {
  /// The primary's log position, as a number of bytes.
  static let positionSQL = "SELECT (pg_current_wal_lsn() - '0/0'::pg_lsn)::bigint"
  /// Whether a server is in recovery, and how far it has replayed the log (`NULL` on a primary).
  static let replaySQL = "SELECT pg_is_in_recovery(), (pg_last_wal_replay_lsn() - '0/0'::pg_lsn)::bigint"

  /// Looks at the servers: reads the primary's log position (the new floor when the floor does
  /// not cover every write that had ended; else only a sample for the lag bound: raising the
  /// floor to where the primary is now would keep out standbys that are a moment behind on
  /// other stores' commits, which this store need not wait for), then asks each server not left out whether it is a standby and how
  /// far it has replayed, all at once. Each question is bounded by the connect timeout, so a
  /// server that stops answering costs a look no more than that.
  func look() async {
    defer {
      state.withLock { state in
        state.looking = false
        state.lastLook = .now
      }
    }
    let writes = primary.writesEnded.withLock { $0 }
    let needsFloor = state.withLock { $0.floorCovers < writes }
    let limit = primary.configuration.connectTimeout
    let position = await answer(within: limit) { [primary] in
      try await primary.withConnection(while: "reading the log position", reading: true) { connection in
        var position: Int64?
        for try await row in try await connection.send(PostgresQuery(unsafeSQL: Self.positionSQL)) {
          position = try row.decode(Int64?.self)
        }
        return position
      }
    }
    if case .success(let position?) = position {
      if needsFloor {
        saw(UInt64(bitPattern: position), after: writes)
      } else {
        sample(UInt64(bitPattern: position))
      }
    }
    let now = ContinuousClock.now
    let due = state.withLock { state in
      state.servers.indices.filter { state.servers[$0].leftOutUntil.map { $0 <= now } ?? true }
    }
    await withTaskGroup(of: Void.self) { group in
      for index in due { group.addTask { await self.look(at: index, within: limit) } }
    }
  }

  /// Asks the server at `index` whether it is a standby and how far it has replayed, and records
  /// the answer, or the failure.
  private func look(at index: Int, within limit: Duration) async {
    let pool = pools[index]
    let answered = await answer(within: limit) {
      try await pool.withConnection(while: "asking a standby how far it has replayed", reading: true) {
        connection in
        var answer: (Bool, Int64?) = (false, nil)
        for try await row in try await connection.send(PostgresQuery(unsafeSQL: Self.replaySQL)) {
          answer = try row.decode((Bool, Int64?).self)
        }
        return answer
      }
    }
    guard case .success(let (recovering, replayed)) = answered else {
      if case .failure(let error) = answered { failed(index, error) }
      return
    }
    let now = ContinuousClock.now
    let (cameBack, startedLagging) = state.withLock { state -> (Bool, Bool) in
      var server = state.servers[index]
      let wasOut = server.failures > 0
      let wasLagging = server.lagging
      server.isStandby = recovering
      server.replayed = replayed.map { UInt64(bitPattern: $0) } ?? 0
      server.answeredAt = now
      server.failures = 0
      server.leftOutUntil = nil
      // Since when the primary has been past this replay position, as far as the looks saw.
      let behindSince = state.positions.first { $0.position > server.replayed }?.at
      server.lagging = recovering && behindSince.map { now - $0 > maxLag } ?? false
      state.servers[index] = server
      return (wasOut && recovering, server.lagging && !wasLagging)
    }
    let address = hosts.all[index].description
    if cameBack {
      logger.info(
        "A standby answers again; reads may go to it", metadata: ["coffer.address": .string(address)])
    }
    if startedLagging {
      logger.info(
        "A standby is further behind the primary than maxStandbyLag (\(maxLag)); reads leave it out until it catches up",
        metadata: ["coffer.address": .string(address)])
    }
  }

  /// What `work` returns or throws, or a timeout after `limit`: work that never ends (a
  /// statement on a server that stopped answering) holds only its own task.
  private func answer<R: Sendable>(
    within limit: Duration, _ work: @escaping @Sendable () async throws -> R
  ) async -> Result<R, any Error> {
    let store = failure.store
    return await withCheckedContinuation { continuation in
      let answer = FirstAnswer<R>(continuation)
      let timer = Task.detached {
        try await Task.sleep(for: limit)
        answer.give(
          .failure(
            CofferError(
              .timedOut, "A server did not answer within \(limit) while being looked at.", store: store)))
      }
      Task.detached {
        await answer.give(from: work)
        timer.cancel()
      }
    }
  }
}
