@_spi(Backend) import Coffer
import NIOCore
import PostgresNIO

/// One pooled connection held for an attempt of a transaction
/// (``PostgresBackend/hostTransaction(_:)``): the attempt's reads and its commit run on it, on
/// its event loop's thread, without leasing a connection for each and without crossing between
/// that thread and the concurrency pool at each await. A transaction that reads two rows and
/// writes them back makes three round trips; each crossing wakes a thread, and on a busy
/// machine the wake-ups cost more than the statements.
///
/// The attempt's task, and the tasks it starts, find the pin in a task-local value. Reads share
/// it (postgres-nio queues statements on a connection); a batch has it to itself, so that no read
/// runs between its `BEGIN` and `COMMIT`. Neither holds it while waiting for anything else, so
/// a call waiting for its turn always gets it. Calls that run an app's code on a connection
/// (snapshots, migration steps) and the rest (preparing entities, the change feed) never use it
/// and lease their own, as outside a transaction; but they never wait for one, since every
/// connection may be held by an attempt waiting like them: when all are in use, they open one
/// beyond the pool's size, closed when it is given back.
///
/// The connection goes back to the pool when the attempt has returned and its last call is done
/// (a task the attempt started and left running may still be in one); a call that lost the
/// connection marks it broken, so that it is closed instead, and every later call leases.
final class PinnedConnection: Sendable {
  /// The pinned connection of the current task, if any.
  @TaskLocal static var current: PinnedConnection?

  /// How a call uses the pinned connection.
  enum Use: Sendable {
    /// One statement at a time beside other reads: a read, a count, an aggregate.
    case shared
    /// Alone: a batch, which may open a transaction of several statements.
    case exclusive
  }

  private struct State {
    var readers = 0
    var writer = false
    var done = false
    var broken = false
    /// Calls waiting for their turn, first come first served; each is resumed with whether it
    /// got the connection (`false`: it leases one of the pool's instead).
    var waiting: [(use: Use, turn: CheckedContinuation<Bool, Never>)] = []

    var isUsable: Bool { !done && !broken }

    func admits(_ use: Use) -> Bool {
      switch use {
      case .shared: !writer
      case .exclusive: !writer && readers == 0
      }
    }

    mutating func admit(_ use: Use) {
      switch use {
      case .shared: readers += 1
      case .exclusive: writer = true
      }
    }

    /// The waiting calls whose turn has come, admitted (resumed with `true`), or all of them
    /// when the connection can no longer be used (resumed with `false`).
    mutating func nextTurns() -> [(turn: CheckedContinuation<Bool, Never>, admitted: Bool)] {
      guard isUsable else {
        defer { waiting = [] }
        return waiting.map { ($0.turn, false) }
      }
      var turns: [(turn: CheckedContinuation<Bool, Never>, admitted: Bool)] = []
      while let first = waiting.first, admits(first.use) {
        admit(first.use)
        turns.append((waiting.removeFirst().turn, true))
      }
      return turns
    }
  }

  let pool: ObjectIdentifier
  let connection: PostgresConnection
  private let state = LockedState(State())

  init(pool: PostgresConnectionPool, connection: PostgresConnection) {
    self.pool = ObjectIdentifier(pool)
    self.connection = connection
  }

  /// Whether the attempt is still running and the connection not lost.
  var isUsable: Bool { state.withLock { $0.isUsable } }

  /// Whether a call lost the connection.
  var isBroken: Bool { state.withLock { $0.broken } }

  /// Waits for the call's turn on the connection; `false` when the attempt is over or the
  /// connection broken, and the call is to lease one of the pool's as usual.
  func enter(_ use: Use) async -> Bool {
    enum Entry {
      case admitted, refused, wait
    }
    let entry = state.withLock { state -> Entry in
      guard state.isUsable else { return .refused }
      guard state.waiting.isEmpty, state.admits(use) else { return .wait }
      state.admit(use)
      return .admitted
    }
    switch entry {
    case .admitted: return true
    case .refused: return false
    case .wait:
      return await withCheckedContinuation { turn in
        let now = state.withLock { state -> Bool? in
          guard state.isUsable else { return false }
          if state.waiting.isEmpty, state.admits(use) {
            state.admit(use)
            return true
          }
          state.waiting.append((use, turn))
          return nil
        }
        if let now { turn.resume(returning: now) }
      }
    }
  }

  /// Counts a call out, letting the calls waiting for it in; `true` when it was the last call
  /// after the attempt's end, and so gives the connection back.
  func leave(_ use: Use, broken: Bool) -> Bool {
    let (turns, last) = state.withLock { state in
      switch use {
      case .shared: state.readers -= 1
      case .exclusive: state.writer = false
      }
      if broken { state.broken = true }
      let idle = state.readers == 0 && !state.writer
      return (state.nextTurns(), state.done && idle)
    }
    for (turn, admitted) in turns { turn.resume(returning: admitted) }
    return last
  }

  /// Marks the attempt over; `true` when no call is on the connection, and so the attempt gives
  /// it back. Calls still waiting lease their own.
  func finish() -> Bool {
    let (turns, idle) = state.withLock { state in
      state.done = true
      return (state.nextTurns(), state.readers == 0 && !state.writer)
    }
    for (turn, admitted) in turns { turn.resume(returning: admitted) }
    return idle
  }
}

extension PostgresConnectionPool {
  /// Runs `attempt` holding one connection of the pool, on that connection's event loop (see
  /// ``PinnedConnection``); within an attempt that holds one already, on that one.
  func pinning<R>(_ attempt: () async throws -> R) async throws -> R {
    if let pin = PinnedConnection.current, pin.pool == ObjectIdentifier(self), pin.isUsable {
      return try await attempt()
    }
    let connection = try await lease(while: "running a transaction")
    let pin = PinnedConnection(pool: self, connection: connection)
    defer {
      if pin.finish() { release(connection, broken: pin.isBroken || connection.isClosed) }
    }
    return try await PinnedConnection.$current.withValue(pin) {
      try await withTaskExecutorPreference(executor(for: connection.eventLoop)) { try await attempt() }
    }
  }

  /// The connection pinned for the current task's transaction in this pool, once it is the
  /// call's turn on it; `nil` when there is none or it cannot be used.
  func pinnedConnection(for use: PinnedConnection.Use) async -> PinnedConnection? {
    guard let pin = PinnedConnection.current, pin.pool == ObjectIdentifier(self), await pin.enter(use) else {
      return nil
    }
    return pin
  }

  /// Counts a call out of a pinned connection, giving it back when the attempt is over.
  func leave(_ pin: PinnedConnection, _ use: PinnedConnection.Use, broken: Bool) {
    if pin.leave(use, broken: broken) {
      release(pin.connection, broken: pin.isBroken || pin.connection.isClosed)
    }
  }
}

@_spi(Backend) extension PostgresBackend: TransactionHosting {
  /// Runs an attempt of a transaction holding one pooled connection, on its event loop's
  /// thread: the attempt's reads and its commit use that connection (see ``PinnedConnection``).
  public func hostTransaction<R>(_ attempt: () async throws -> R) async throws -> R {
    try checkOpen()
    return try await pool.pinning(attempt)
  }
}
