@_spi(Backend) import Coffer
import Logging
import NIOCore
import PostgresNIO

/// The backend's connections to the server: at most ``PostgresBackend/Configuration/poolSize``
/// open at once, reused call after call, opened on demand.
///
/// A connection that fails with a lost-connection error is dropped, not reused, so the next call
/// after the server restarts or a connection is cut opens a new one. Opening a connection that
/// fails throws at once a typed error (server not running, wrong password, missing database),
/// where postgres-nio's `PostgresClient` keeps retrying in the background while its callers
/// wait: that is why the backend keeps its own pool.
///
/// With several servers in the URL, each new connection goes to the first that accepts writes,
/// trying the one that did last time first (`PostgresConnectionPool+Hosts.swift`); a connection
/// that finds its server read-only is dropped too, so that the next one looks again.
final class PostgresConnectionPool: Sendable {
  /// Which server a pool's connections go to.
  enum Target: Sendable, Equatable {
    /// The one that accepts writes (the only one, or the first of several found to).
    case primary
    /// The server at this index of the hosts, whatever it is: the pool of a standby's reads.
    case server(Int)
  }

  private struct State {
    var idle: [PostgresConnection] = []
    /// Connections open or being opened.
    var open = 0
    /// Callers waiting for a connection: each is handed one that another caller released, or
    /// `nil`, meaning "a slot is free: open one".
    var waiters: [CheckedContinuation<PostgresConnection?, any Error>] = []
    var closed = false
    var nextID = 1
  }

  let configuration: PostgresBackend.Configuration
  let failure: PostgresFailure
  let logger: Logger
  /// The servers, and the one that accepted the last connection.
  let hosts: PostgresHosts
  private let state = LockedState(State())
  /// The loss watch of each open connection (see ``lossWatch(for:)``).
  private let watches = LockedState<[ObjectIdentifier: PostgresLossWatch]>([:])
  /// The task executor of each event loop the pool's connections run on.
  private let executors = LockedState<[ObjectIdentifier: EventLoopExecutor]>([:])
  /// The connection settings for each of ``hosts``, in the same order.
  let connectionConfigurations: [PostgresConnection.Configuration]
  /// Where the statements sent on the pool's connections are logged (`logStatements=on`) and
  /// made spans of, under the span of the store call that sent them (a tracer was in force as
  /// the store opened); `nil` when neither.
  let statementWatch: PostgresStatementWatch?
  /// The pool's gauges and wait times, when a metrics backend is bootstrapped.
  let metrics: ConnectionPoolMetrics?
  /// Which server the connections go to.
  let target: Target
  /// How many calls that may have written (any call but a read) have ended, successful or not,
  /// in this pool and the other pools of the process on the same servers and database
  /// (``PostgresWriteCount``).
  let writesEnded: LockedState<Int>

  /// The TLS context of every pool in the process, made on first use. Making one reads and parses
  /// the system's whole CA bundle: with one per store, that was 13 % of the CPU time of the
  /// conformance suite against PostgreSQL (debug build). Its configuration is always the default
  /// client one, so one serves every store.
  private static let clientTLSContext = Result {
    try NIOSSLContext(configuration: .makeClientConfiguration())
  }

  init(
    configuration: PostgresBackend.Configuration, failure: PostgresFailure, logger: Logger,
    target: Target = .primary
  ) throws {
    self.target = target
    self.writesEnded = PostgresWriteCount.counter(for: configuration)
    self.configuration = configuration
    self.failure = failure
    self.logger = logger
    self.hosts = failure.hosts
    self.statementWatch = PostgresStatementWatch.make(
      log: configuration.logStatements ? StatementLog(logger: logger) : nil,
      tracer: StatementTracer.current(system: "postgresql", store: failure.store))
    self.metrics = ConnectionPoolMetrics.current(
      system: "postgresql", pool: target.label(failure), maximum: configuration.poolSize)
    let tls: PostgresConnection.Configuration.TLS
    switch configuration.tls {
    case .disable:
      tls = .disable
    case .prefer, .require:
      switch Self.clientTLSContext {
      case .success(let context):
        tls = configuration.tls == .prefer ? .prefer(context) : .require(context)
      case .failure(let error):
        throw CofferError(
          .invalidConfiguration,
          "TLS could not be set up on this machine (\(type(of: error))). Use tls=disable on a trusted network, "
            + "or install the system's CA certificates.",
          store: failure.store)
      }
    }
    var connection = PostgresConnection.Configuration(
      host: hosts.all[0].name, port: hosts.all[0].port, username: configuration.user,
      password: configuration.password, database: configuration.database, tls: tls)
    connection.options.connectTimeout = .nanoseconds(configuration.connectTimeout.nanoseconds)
    var parameters: [(String, String)] = [("application_name", "coffer"), ("TimeZone", "UTC")]
    if let timeout = configuration.statementTimeout {
      let milliseconds =
        timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
      parameters.append(("statement_timeout", "\(max(1, milliseconds))"))
    }
    connection.options.additionalStartupParameters = parameters
    self.connectionConfigurations = hosts.all.map { host in
      var each = PostgresConnection.Configuration(
        host: host.name, port: host.port, username: configuration.user, password: configuration.password,
        database: configuration.database, tls: tls)
      each.options = connection.options
      return each
    }
  }

  /// Runs `body` with a connection of the pool, giving it back afterwards; a connection whose
  /// call lost it is closed instead. `body` runs on the connection's event loop unless
  /// `onItsEventLoop` is `false` (for a body that runs an app's code). With `pinned`, a call
  /// inside a transaction's attempt runs on the connection the attempt holds, used that way
  /// (see ``PinnedConnection``). A call is counted in ``writesEnded`` when it ends unless it is
  /// `reading`.
  func withConnection<R>(
    while action: String, onItsEventLoop: Bool = true, pinned: PinnedConnection.Use? = nil,
    reading: Bool = false,
    _ body: (PostgresConnection) async throws -> R
  ) async throws -> R {
    defer { if !reading { writesEnded.withLock { $0 += 1 } } }
    if let use = pinned, let pin = await pinnedConnection(for: use) {
      do {
        let result = try await logged { try await body(pin.connection) }
        leave(pin, use, broken: false)
        return result
      } catch {
        leave(pin, use, broken: isLost(pin.connection, after: error))
        throw error
      }
    }
    let started = metrics == nil ? nil : ContinuousClock.now
    let connection = try await lease(while: action)
    if let started, let metrics {
      metrics.recordWait(since: started)
      recordCounts(metrics)
    }
    defer { if let metrics { recordCounts(metrics) } }
    do {
      let result: R
      if onItsEventLoop {
        // On the connection's event loop thread: no hop between the loop and the Swift
        // concurrency pool at every await of the query.
        result = try await withTaskExecutorPreference(executor(for: connection.eventLoop)) {
          try await logged { try await body(connection) }
        }
      } else {
        result = try await logged { try await body(connection) }
      }
      release(connection, broken: false)
      return result
    } catch {
      release(connection, broken: isLost(connection, after: error))
      throw error
    }
  }

  /// Whether a call that failed with `error` leaves `connection` unfit for another call: lost,
  /// closed, or (with several servers) on one that turned read-only, a demoted primary.
  private func isLost(_ connection: PostgresConnection, after error: any Error) -> Bool {
    let readOnly = hosts.areSeveral && PostgresFailure.sqlState(of: error) == "25006"
    return PostgresFailure.retiresConnection(error) || readOnly || connection.isClosed
  }

  /// The watch for the close of a connection of this pool; a fresh one, already closed, for a
  /// connection that has closed.
  func lossWatch(for connection: PostgresConnection) -> PostgresLossWatch {
    if let watch = watches.withLock({ $0[ObjectIdentifier(connection)] }) { return watch }
    let closed = PostgresLossWatch()
    closed.connectionClosed()
    return closed
  }

  /// The executor that runs tasks on an event loop.
  func executor(for eventLoop: any EventLoop) -> EventLoopExecutor {
    executors.withLock { executors in
      let key = ObjectIdentifier(eventLoop)
      if let executor = executors[key] { return executor }
      let executor = EventLoopExecutor(eventLoop)
      executors[key] = executor
      return executor
    }
  }

  /// Runs `body` with the pool's statement watch bound to the task, when it logs or traces
  /// statements.
  ///
  /// The closure captures the caller's isolation, so `body` runs where the caller runs: a
  /// task-local's operation not isolated to anything would leave a main-actor caller's thread
  /// and come back, two hops a statement (see `StoreTelemetry.run`).
  private func logged<R>(isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> R)
    async throws -> R
  {
    guard let statementWatch else { return try await body() }
    return try await PostgresStatementWatch.$current.withValue(
      statementWatch,
      operation: {
        _ = isolation
        return try await body()
      }, isolation: isolation)
  }

  /// Records the pool's open, idle and waiting counts.
  private func recordCounts(_ metrics: ConnectionPoolMetrics) {
    let (idle, open, pending) = state.withLock { ($0.idle.count, $0.open, $0.waiters.count) }
    metrics.record(idle: idle, used: max(0, open - idle), pending: pending)
  }

  /// A connection: an idle one, a new one when fewer than the pool's size are open, or the
  /// next one released.
  func lease(while action: String) async throws -> PostgresConnection {
    enum Next {
      case use(PostgresConnection)
      case open(Int)
      case wait
    }
    // Set when the server refused a new connection for want of slots: then this caller waits
    // for one of the pool's own connections instead (or, when it has none, tries once more).
    var serverFull: CofferError?
    while true {
      let next = try state.withLock { state -> Next in
        if state.closed { throw closedError() }
        while let connection = state.idle.popLast() {
          if !connection.isClosed { return .use(connection) }
          state.open -= 1
        }
        // Inside a transaction's attempt that holds a connection of this pool, a call that
        // cannot use that one never waits for another: the connections it would wait for may
        // all be held by attempts waiting like it (see `PinnedConnection`).
        let overflow = serverFull == nil && PinnedConnection.current?.pool == ObjectIdentifier(self)
        if state.open < configuration.poolSize || overflow, serverFull == nil || state.open == 0 {
          state.open += 1
          state.nextID += 1
          return .open(state.nextID)
        }
        return .wait
      }
      switch next {
      case .use(let connection):
        return connection
      case .open(let id):
        do {
          return try await connect(id: id, while: action)
        } catch let error as CofferError
          where serverFull == nil && (error.underlying as? PostgresServerError)?.sqlState == "53300"
        {
          logger.debug("The server has no connection slots left; waiting for one of the pool's connections")
          serverFull = error
          continue
        }
      case .wait:
        let handed = try await withCheckedThrowingContinuation { continuation in
          let closed = state.withLock { state -> Bool in
            if state.closed { return true }
            state.waiters.append(continuation)
            return false
          }
          if closed { continuation.resume(throwing: closedError()) }
        }
        if let handed, !handed.isClosed { return handed }
        // A slot was freed for this caller (or the connection handed over was closed while
        // idle, and its slot is this caller's now): open a connection in it.
        let id = state.withLock { state in
          state.nextID += 1
          return state.nextID
        }
        return try await connect(id: id, while: action)
      }
    }
  }

  /// Opens a connection in a slot already counted in `open` (on the server that accepts
  /// writes, when there are several); gives the slot back if it fails.
  private func connect(id: Int, while action: String) async throws -> PostgresConnection {
    do {
      let connection = try await open(id: id, while: action)
      let watch = PostgresLossWatch()
      let key = ObjectIdentifier(connection)
      watches.withLock { $0[key] = watch }
      connection.closeFuture.whenComplete { [watches] _ in
        watches.withLock { _ = $0.removeValue(forKey: key) }
        watch.connectionClosed()
      }
      logger.trace("Opened a connection", metadata: ["coffer.connection": .stringConvertible(id)])
      return connection
    } catch {
      freeSlot()
      throw error
    }
  }

  /// Gives a connection back: to a waiting caller, to the idle list, or (when broken) closes it
  /// and hands its slot on.
  func release(_ connection: PostgresConnection, broken: Bool) {
    if broken {
      Self.closeInBackground(connection)
      freeSlot()
      return
    }
    enum Next {
      case handOver(CheckedContinuation<PostgresConnection?, any Error>)
      case idle
      case close
    }
    let next = state.withLock { state -> Next in
      if state.closed { return .idle }
      if !state.waiters.isEmpty { return .handOver(state.waiters.removeFirst()) }
      // One opened beyond the pool's size (see `lease(while:)`) is closed, not kept.
      if state.open > configuration.poolSize { return .close }
      state.idle.append(connection)
      return .idle
    }
    let waiter: CheckedContinuation<PostgresConnection?, any Error>?
    switch next {
    case .handOver(let handed): waiter = handed
    case .idle: waiter = nil
    case .close:
      Self.closeInBackground(connection)
      freeSlot()
      return
    }
    if let waiter {
      waiter.resume(returning: connection)
    } else if state.withLock({ $0.closed }) {
      Self.closeInBackground(connection)
    }
  }

  /// Closes a connection without waiting, keeping it alive until its channel is closed: a
  /// `PostgresConnection` freed while open leaks its socket and server session (and fails an
  /// assertion in debug builds).
  private static func closeInBackground(_ connection: PostgresConnection) {
    connection.close().whenComplete { _ in withExtendedLifetime(connection) {} }
  }

  /// A store dropped without ``close()`` closes its idle connections here.
  deinit {
    for connection in state.withLock({ $0.idle }) { Self.closeInBackground(connection) }
  }

  /// Frees a slot: the first waiter may open a connection in it.
  private func freeSlot() {
    let waiter = state.withLock { state -> CheckedContinuation<PostgresConnection?, any Error>? in
      if !state.waiters.isEmpty { return state.waiters.removeFirst() }
      state.open -= 1
      return nil
    }
    waiter?.resume(returning: nil)
  }

  /// Closes every idle connection and fails every waiter; connections in use are closed when
  /// they come back.
  func close() async {
    let (idle, waiters) = state.withLock { state in
      state.closed = true
      defer {
        state.idle = []
        state.waiters = []
      }
      return (state.idle, state.waiters)
    }
    for waiter in waiters { waiter.resume(throwing: closedError()) }
    for connection in idle { try? await connection.close() }
  }

  /// Whether the current task runs an attempt of a transaction holding a connection of this pool.
  var holdsPin: Bool {
    guard let pin = PinnedConnection.current else { return false }
    return pin.pool == ObjectIdentifier(self) && pin.isUsable
  }

  private func closedError() -> CofferError {
    CofferError(.closed, "This store was closed. Open it again to use it.", store: failure.store)
  }
}

extension PostgresConnectionPool.Target {
  /// The pool's name in metrics: the store's, and for a standby's pool its server too.
  func label(_ failure: PostgresFailure) -> String {
    switch self {
    case .primary: failure.store
    case .server(let index): "\(failure.store) reads on \(failure.hosts.all[index])"
    }
  }
}
