import Dispatch
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import RawPostgres
import Synchronization

/// The spike behind the PostgreSQL backend's design choice (issue 47): one query — a message by
/// id — reached from Swift's async code in each way a backend could reach it, on one connection,
/// against the same table, so that what each way costs beside a blocking libpq call is measured
/// rather than guessed.
///
/// - `blocking`: libpq called on the awaiting task's own thread, waiting in `recv` (the floor;
///   no backend may do it, since it holds a thread of the caller's executor for the whole round
///   trip);
/// - `nio`: postgres-nio alone, a named prepared statement run with the task preferring the
///   connection's event loop as its executor, as the backend runs its reads, and without that
///   preference;
/// - `queue`: libpq on a serial dispatch queue of its own, the task suspended meanwhile;
/// - `poller`: the query sent with libpq on the task's own thread (no other thread woken for the
///   send), the reply awaited by one thread that waits on every connection's socket (`epoll`) and
///   resumes the task;
/// - `poller+spin`: as `poller`, after reading the socket for up to 40 or 200 µs on the task's
///   thread, which on loopback often catches the reply before any thread sleeps.
enum PostgresGetSpike {
  /// One way of running the lookup: the message's thread id, or nil when there is none.
  /// Each instance is used by one task at a time.
  protocol Path: AnyObject, Sendable {
    var name: String { get }
    func threadID(of id: Int64) async throws -> Int64?
  }

  static let sql = #"SELECT id, "threadID", sender, text, date, "isRead" FROM "ChatMessage" WHERE id = $1"#

  /// Every path, each with a connection of its own to `url`; the pollers share one thread.
  static func paths(_ url: String, poller: ReplyPoller) async throws -> [any Path] {
    [
      try BlockingPath(url), try await NIOPath(url, onEventLoop: true),
      try await NIOPath(url, onEventLoop: false),
      try QueuePath(url), try PollerPath(url, poller, spin: nil),
      try PollerPath(url, poller, spin: .microseconds(40)),
      try PollerPath(url, poller, spin: .microseconds(200)),
    ]
  }

  /// `count` sets of ``paths(_:poller:)``, for as many tasks at once.
  static func pathSets(_ url: String, count: Int) async throws -> [[any Path]] {
    let poller = try ReplyPoller()
    var sets: [[any Path]] = []
    for _ in 0..<count { sets.append(try await paths(url, poller: poller)) }
    return sets
  }
}

/// A libpq connection with the lookup prepared, in nonblocking mode when asked.
private func preparedConnection(_ url: String, nonblocking: Bool = false) throws -> PQConnection {
  let connection = try PQConnection(url)
  try connection.prepare("get", PostgresGetSpike.sql)
  if nonblocking, PQsetnonblocking(connection.handle, 1) != 0 {
    throw BenchError("PQsetnonblocking: \(connection.message)")
  }
  return connection
}

/// The thread id in a lookup's result.
private func threadID(in result: PQResult) -> Int64? { result.count == 0 ? nil : result.int64(0, 1) }

private final class BlockingPath: PostgresGetSpike.Path, @unchecked Sendable {
  let name = "blocking"
  private let connection: PQConnection
  init(_ url: String) throws { connection = try preparedConnection(url) }
  func threadID(of id: Int64) async throws -> Int64? {
    coffer_bench.threadID(in: try connection.run("get", id))
  }
}

private final class QueuePath: PostgresGetSpike.Path, @unchecked Sendable {
  let name = "queue"
  private let connection: PQConnection
  private let queue = DispatchQueue(label: "coffer-bench.spike.queue")
  init(_ url: String) throws { connection = try preparedConnection(url) }
  func threadID(of id: Int64) async throws -> Int64? {
    try await withCheckedThrowingContinuation { continuation in
      queue.async {
        continuation.resume(
          with: Swift.Result { coffer_bench.threadID(in: try self.connection.run("get", id)) })
      }
    }
  }
}

private final class NIOPath: PostgresGetSpike.Path, @unchecked Sendable {
  let name: String
  private let connection: PostgresConnection
  /// The connection's event loop as a task executor, when the task is to prefer it.
  private let executor: SpikeLoopExecutor?
  private let logger = Logger(label: "coffer-bench.spike")

  struct Get: PostgresPreparedStatement {
    static let sql = PostgresGetSpike.sql
    typealias Row = (Int64, Int64, String, String, Date, Bool)
    var id: Int64
    func makeBindings() throws -> PostgresBindings {
      var bindings = PostgresBindings()
      bindings.append(id)
      return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
  }

  init(_ url: String, onEventLoop: Bool) async throws {
    name = onEventLoop ? "nio" : "nio, no executor preference"
    guard let components = URLComponents(string: url), let host = components.host, let user = components.user
    else { throw BenchError("the database URL does not parse") }
    let configuration = PostgresConnection.Configuration(
      host: host, port: components.port ?? 5432, username: user, password: components.password,
      database: String(components.path.dropFirst()), tls: .disable)
    let eventLoop = MultiThreadedEventLoopGroup.singleton.next()
    connection = try await PostgresConnection.connect(
      on: eventLoop, configuration: configuration, id: 1, logger: logger)
    executor = onEventLoop ? SpikeLoopExecutor(eventLoop) : nil
  }

  func threadID(of id: Int64) async throws -> Int64? {
    guard let executor else { return try await lookUp(id) }
    return try await withTaskExecutorPreference(executor) { try await lookUp(id) }
  }

  private func lookUp(_ id: Int64) async throws -> Int64? {
    var found: Int64?
    for try await row in try await connection.execute(Get(id: id), logger: logger) { found = row.1 }
    return found
  }
}

/// Runs jobs on one event loop, as the backend's `EventLoopExecutor` does.
private final class SpikeLoopExecutor: TaskExecutor {
  let eventLoop: any EventLoop
  init(_ eventLoop: any EventLoop) { self.eventLoop = eventLoop }
  func enqueue(_ job: consuming ExecutorJob) {
    let job = UnownedJob(job)
    eventLoop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
  }
}

private final class PollerPath: PostgresGetSpike.Path, @unchecked Sendable {
  let name: String
  private let connection: PQConnection
  private let poller: ReplyPoller
  private let spin: Duration?

  init(_ url: String, _ poller: ReplyPoller, spin: Duration?) throws {
    connection = try preparedConnection(url, nonblocking: true)
    self.poller = poller
    self.spin = spin
    name = spin.map { "poller+spin \($0.components.attoseconds / 1_000_000_000_000) µs" } ?? "poller"
  }

  func threadID(of id: Int64) async throws -> Int64? {
    let handle = connection.handle
    var bigEndian = id.bigEndian
    let sent = withUnsafeBytes(of: &bigEndian) { bytes in
      var pointer = bytes.baseAddress?.assumingMemoryBound(to: CChar.self)
      var length: Int32 = 8
      var format: Int32 = 1
      return PQsendQueryPrepared(handle, "get", 1, &pointer, &length, &format, 1)
    }
    guard sent == 1 else { throw BenchError("PQsendQueryPrepared: \(connection.message)") }
    while true {
      let flushed = PQflush(handle)
      if flushed == 0 { break }
      if flushed < 0 { throw BenchError("PQflush: \(connection.message)") }
    }
    if let spin {
      let deadline = ContinuousClock.now + spin
      repeat {
        guard PQconsumeInput(handle) == 1 else { throw BenchError("PQconsumeInput: \(connection.message)") }
        if PQisBusy(handle) == 0 { return try ReplyPoller.collect(handle) }
      } while ContinuousClock.now < deadline
    }
    return try await poller.reply(on: handle)
  }
}

/// One thread waiting on the sockets of every connection with a query out, resuming each query's
/// task once its reply has arrived.
final class ReplyPoller: @unchecked Sendable {
  private let epoll: Int32
  /// A query's connection and its task, while the reply is out.
  private final class Waiter: @unchecked Sendable {
    let handle: OpaquePointer
    let continuation: CheckedContinuation<Int64?, any Error>
    init(_ handle: OpaquePointer, _ continuation: CheckedContinuation<Int64?, any Error>) {
      self.handle = handle
      self.continuation = continuation
    }
  }
  private let waiting = Mutex<[Int32: Waiter]>([:])

  init() throws {
    epoll = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard epoll >= 0 else { throw BenchError("epoll_create1 failed") }
    let thread = Thread { [self] in run() }
    thread.start()
  }

  /// The thread id of a reply once all of it has arrived, after `PQisBusy` said it has.
  static func collect(_ handle: OpaquePointer) throws -> Int64? {
    var found: Int64?
    var failure: String?
    while let next = PQgetResult(handle) {
      let status = PQresultStatus(next)
      if status == PGRES_TUPLES_OK {
        if PQntuples(next) > 0, let value = PQgetvalue(next, 0, 1) {
          found = Int64(bigEndian: UnsafeRawPointer(value).loadUnaligned(as: Int64.self))
        }
      } else if status != PGRES_COMMAND_OK {
        failure = String(cString: PQresultErrorMessage(next))
      }
      PQclear(next)
    }
    if let failure { throw BenchError("the lookup failed: \(failure)") }
    return found
  }

  /// Waits for the reply on `handle`'s socket.
  func reply(on handle: OpaquePointer) async throws -> Int64? {
    let socket = PQsocket(handle)
    return try await withCheckedThrowingContinuation { continuation in
      let waiter = Waiter(handle, continuation)
      waiting.withLock { $0[socket] = waiter }
      var event = epoll_event()
      event.events = EPOLLIN.rawValue | EPOLLONESHOT.rawValue
      event.data.fd = socket
      if epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &event) != 0 {
        _ = epoll_ctl(epoll, EPOLL_CTL_ADD, socket, &event)
      }
    }
  }

  private func run() {
    var events = [epoll_event](repeating: epoll_event(), count: 16)
    while true {
      let count = epoll_wait(epoll, &events, Int32(events.count), -1)
      guard count > 0 else { continue }
      for event in events.prefix(Int(count)) {
        let socket = event.data.fd
        guard let waiter = waiting.withLock({ $0[socket] }) else { continue }
        if PQconsumeInput(waiter.handle) != 1 || PQisBusy(waiter.handle) == 0 {
          waiting.withLock { _ = $0.removeValue(forKey: socket) }
          waiter.continuation.resume(with: Swift.Result { try Self.collect(waiter.handle) })
        } else {
          var again = epoll_event()
          again.events = EPOLLIN.rawValue | EPOLLONESHOT.rawValue
          again.data.fd = socket
          _ = epoll_ctl(epoll, EPOLL_CTL_MOD, socket, &again)
        }
      }
    }
  }
}
