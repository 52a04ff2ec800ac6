@_spi(Backend) import Coffer
import PostgresNIO

extension PostgresBackend {
  /// Runs a plain read's `body` on the server the URL's read placement picks
  /// (``Configuration/reads``): on the primary with `reads=primary`, inside a transaction's
  /// attempt (its reads run on the connection it holds), or when no standby qualifies (see
  /// ``PostgresStandbyReads``); else on a standby.
  ///
  /// A read that fails on a standby runs again on the primary when `restartable` says it handed
  /// over nothing yet; otherwise its error names the standby. A standby whose connection failed
  /// is left out for a while.
  func withReadConnection<R>(
    while action: String, restartable: () -> Bool = { true }, _ body: (PostgresConnection) async throws -> R
  ) async throws -> R {
    guard let standbyReads, !pool.holdsPin else {
      return try await pool.withConnection(while: action, pinned: .shared, reading: true, body)
    }
    let route = standbyReads.route()
    guard case .server(let index) = route else {
      let result = try await pool.withConnection(while: action, pinned: .shared, reading: true, body)
      standbyReads.count(.primary)
      return result
    }
    do {
      let result = try await standbyReads.pools[index].withConnection(while: action, reading: true, body)
      standbyReads.count(route)
      return result
    } catch {
      if error is VisitorStopped || error is CancellationError || Task.isCancelled { throw error }
      let host = standbyReads.hosts.all[index]
      if PostgresFailure.isConnectionLoss(error) || PostgresFailure.sqlState(of: error) == nil {
        standbyReads.failed(index, error)
      }
      guard restartable() else { throw failure.error(error, while: action, on: host) }
      logger.debug(
        "A read failed on a standby; it runs again on the primary",
        metadata: [
          "coffer.address": .string(host.description),
          "coffer.reason": .string(PostgresFailure.briefly(error)),
        ])
      let result = try await pool.withConnection(while: action, pinned: .shared, reading: true, body)
      standbyReads.count(.primary)
      return result
    }
  }

  /// The reads each server of the URL served since the store opened, by `host:port`; empty
  /// with `reads=primary` or a single server. For tests and the benchmark.
  package func readsServed() -> [String: Int] {
    standbyReads?.served() ?? [:]
  }

  /// How many looks at the servers (one statement on the primary, one on each server) the store
  /// has started since it opened: what spreading reads costs the servers besides the reads.
  package func standbyLooks() -> Int {
    standbyReads?.state.withLock { $0.looks } ?? 0
  }
}
