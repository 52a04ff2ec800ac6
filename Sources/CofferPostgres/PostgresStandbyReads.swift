@_spi(Backend) import Coffer
import Logging
import PostgresNIO

/// Where a store's plain reads go when its URL names standbys and says `reads=standby` or
/// `reads=any`: which servers may serve a read now, and what the store knows of each.
///
/// A standby serves a read only when all of this holds, checked without a round trip from what
/// the last look at the servers found (`PostgresStandbyReads+Look.swift`):
/// - it is in recovery (a standby), answered the last look, and that look is recent
///   (``trustFor``);
/// - it has replayed the WAL up to the store's *floor*: a position of the primary's log read
///   after every call of this store that may have written had ended (its batches, schema
///   changes), after every commit marker an observer of the store read, and after every read of
///   the change feed that found batches. Until a look has read such a position since the last
///   write ended, every read goes to the primary. So a read after a commit through the store
///   sees that commit: read-your-writes, and an observer's query after a marker moved, or after
///   the feed brought a batch (committed by this store or another), sees what moved it;
/// - it is no further behind than ``PostgresBackend/Configuration/maxStandbyLag``: the primary
///   was not yet past its replay position that long ago, as far as the looks saw.
///
/// A read never waits for a standby: when none qualifies it goes to the primary at once, and a
/// look runs in the background (one at a time) so that later reads may go to the standbys.
/// A read that fails on a standby runs again on the primary (when it has handed over no row
/// yet); a standby whose connection failed is left out for a back-off that doubles with each
/// failure (``backOff(after:)``), then looked at again and taken back when it answers.
final class PostgresStandbyReads: Sendable {
  /// What the store knows of one server of the URL.
  struct Server: Sendable {
    /// Whether the last look found it in recovery.
    var isStandby = false
    /// Its replay position (`pg_last_wal_replay_lsn()`) at the last look.
    var replayed: UInt64 = 0
    /// When it last answered a look.
    var answeredAt: ContinuousClock.Instant?
    /// Until when it is left out after a failure.
    var leftOutUntil: ContinuousClock.Instant?
    /// Failures since it last answered.
    var failures = 0
    /// Whether the last look found it further behind than the bound.
    var lagging = false
  }

  struct State: Sendable {
    var servers: [Server]
    /// The log position every standby read needs replayed (see the type's description).
    var floor: UInt64 = 0
    /// How many of the primary pool's writing calls had ended when ``floor`` was read; `-1`
    /// until the first look, so that a store just opened reads on the primary until it knows
    /// where the primary's log was at its opening.
    var floorCovers = -1
    /// Positions of the primary's log and when they were read, oldest first: how far behind a
    /// standby is.
    var positions: [(at: ContinuousClock.Instant, position: UInt64)] = []
    var looking = false
    var lastLook: ContinuousClock.Instant?
    /// Spreads reads over the usable servers in turn.
    var turn = 0
    /// Reads served by each server of the URL (by index), for tests and the benchmark.
    var served: [Int: Int] = [:]
    /// Looks started since the store opened.
    var looks = 0
    var closed = false
  }

  /// The pool of the primary, whose `writesEnded` the floor is checked against, and whose
  /// configuration, servers and failure handling the standbys' pools share.
  let primary: PostgresConnectionPool
  /// A pool of connections to each server of the URL, by index.
  let pools: [PostgresConnectionPool]
  var placement: PostgresBackend.Configuration.ReadPlacement { primary.configuration.reads }
  var maxLag: Duration { primary.configuration.maxStandbyLag }
  var hosts: PostgresHosts { primary.hosts }
  var failure: PostgresFailure { primary.failure }
  /// How often the servers are looked at while the store reads.
  let lookEvery: Duration
  /// How old a look may be for a standby to serve reads on what it found.
  let trustFor: Duration
  let logger: Logger
  let state: LockedState<State>

  init(primary: PostgresConnectionPool, logger: Logger) throws {
    let configuration = primary.configuration
    self.lookEvery = min(.milliseconds(100), configuration.maxStandbyLag / 4)
    self.trustFor = min(.seconds(1), configuration.maxStandbyLag / 2)
    self.primary = primary
    self.logger = logger
    self.pools = try primary.hosts.all.indices.map { index in
      try PostgresConnectionPool(
        configuration: configuration, failure: primary.failure, logger: logger, target: .server(index))
    }
    self.state = LockedState(State(servers: Array(repeating: Server(), count: primary.hosts.all.count)))
  }

  /// How long a standby is left out after its `failures`-th failure in a row: a quarter of a
  /// second, doubling, at most 8 seconds.
  static func backOff(after failures: Int) -> Duration {
    .milliseconds(250 << min(max(failures - 1, 0), 5))
  }

  /// Where a read goes.
  enum Route: Equatable {
    case primary
    case server(Int)
  }

  /// Picks the server for a read from what the store knows now, and starts a look when what it
  /// knows is old or does not cover the store's last write.
  func route() -> Route {
    let writes = primary.writesEnded.withLock { $0 }
    let now = ContinuousClock.now
    let (route, look) = state.withLock { state -> (Route, Bool) in
      let floorKnown = state.floorCovers >= writes
      var usable: [Route] = []
      for (index, server) in state.servers.enumerated()
      where floorKnown && isUsable(server, floor: state.floor, now: now) {
        usable.append(.server(index))
      }
      let old = state.lastLook.map { now - $0 >= lookEvery } ?? true
      let wanted =
        !floorKnown || usable.isEmpty ? state.lastLook.map { now - $0 >= .milliseconds(2) } ?? true : old
      let look = wanted && !state.looking && !state.closed
      if look {
        state.looking = true
        state.looks += 1
      }
      if placement == .any { usable.append(.primary) }
      guard !usable.isEmpty else { return (.primary, look) }
      state.turn &+= 1
      return (usable[state.turn % usable.count], look)
    }
    if look { Task.detached { await self.look() } }
    return route
  }

  private func isUsable(_ server: Server, floor: UInt64, now: ContinuousClock.Instant) -> Bool {
    guard server.isStandby, !server.lagging, server.replayed >= floor, let answered = server.answeredAt,
      now - answered <= trustFor
    else { return false }
    if let until = server.leftOutUntil, until > now { return false }
    return true
  }

  /// Counts a read served by `route`.
  func count(_ route: Route) {
    let index: Int
    switch route {
    case .primary: index = hosts.all.firstIndex(of: hosts.current) ?? 0
    case .server(let server): index = server
    }
    state.withLock { $0.served[index, default: 0] += 1 }
  }

  /// Reads served by each server since the store opened, by `host:port`.
  func served() -> [String: Int] {
    let served = state.withLock { $0.served }
    var byHost: [String: Int] = [:]
    for (index, count) in served { byHost[hosts.all[index].description, default: 0] += count }
    return byHost
  }

  /// Records a failure of the server at `index`: it is left out for a back-off.
  func failed(_ index: Int, _ error: any Error) {
    let failures = state.withLock { state -> Int in
      state.servers[index].failures += 1
      let failures = state.servers[index].failures
      state.servers[index].leftOutUntil = .now + Self.backOff(after: failures)
      return failures
    }
    logger.info(
      "A standby failed; reads leave it out for \(Self.backOff(after: failures)), then look at it again",
      metadata: [
        "coffer.address": .string(hosts.all[index].description),
        "coffer.reason": .string(PostgresFailure.briefly(error)),
      ])
  }

  /// Records a commit marker `position` read from the primary after `writes` writing calls of
  /// the store had ended: reads after it see what moved it.
  func saw(_ position: UInt64, after writes: Int) {
    state.withLock { state in
      state.floor = max(state.floor, position)
      state.floorCovers = max(state.floorCovers, writes)
      state.positions.append((.now, position))
      trim(&state.positions)
    }
  }

  /// Records a position of the primary's log, for the lag bound only.
  func sample(_ position: UInt64) {
    state.withLock { state in
      state.positions.append((.now, position))
      trim(&state.positions)
    }
  }

  /// Keeps the positions a lag bound needs: those of the last two bounds, and the newest.
  func trim(_ positions: inout [(at: ContinuousClock.Instant, position: UInt64)]) {
    let horizon = ContinuousClock.now - maxLag * 2
    if let keep = positions.firstIndex(where: { $0.at >= horizon }), keep > 1 {
      positions.removeFirst(keep - 1)
    }
    if positions.count > 256 { positions.removeFirst(positions.count - 256) }
  }

  /// Stops looking at the servers and closes their pools.
  func close() async {
    state.withLock { $0.closed = true }
    for pool in pools { await pool.close() }
  }
}
