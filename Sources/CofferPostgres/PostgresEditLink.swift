@_spi(Backend) import Coffer
import Dispatch
import NIOCore
import PostgresNIO

/// Carries the statements of a migration step's body — synchronous code on a thread of its
/// own, never the Swift concurrency pool's or an event loop's — to its connection, and blocks
/// that thread until each is answered.
///
/// Each statement runs in a task that prefers the connection's event loop; the body's thread
/// waits on a semaphore. postgres-nio may never answer a statement that was running when its
/// connection died (see ``PostgresBackend/abandoningOnLoss(of:watchedBy:on:store:_:)``), so a lost
/// connection also wakes the thread, shortly after, with ``Coffer/CofferError/Code/unavailable``.
final class PostgresEditLink: Sendable {
  let connection: PostgresConnection
  let executor: EventLoopExecutor
  let failure: PostgresFailure
  /// The statement being waited for, and whether the connection was lost.
  private let waiting = LockedState<(current: Waiter?, lost: Bool)>((nil, false))

  init(connection: PostgresConnection, executor: EventLoopExecutor, failure: PostgresFailure) {
    self.connection = connection
    self.executor = executor
    self.failure = failure
    connection.closeFuture.whenComplete { [waiting, store = failure.store] _ in
      connection.eventLoop.scheduleTask(in: PostgresBackend.graceAfterLoss) {
        let current = waiting.withLock { waiting in
          waiting.lost = true
          return waiting.current
        }
        current?.give(.failure(Self.lost(store)))
      }
    }
  }

  /// Runs `work` on the connection's event loop and blocks the calling thread until it is
  /// done. Call it only from the thread that runs the step's body.
  ///
  /// - Throws: what `work` throws, as a ``Coffer/CofferError`` saying what was being done.
  @discardableResult
  func wait<T: Sendable>(
    while action: String, entity: String? = nil, _ work: @escaping @Sendable () async throws -> T
  ) throws -> T {
    let waiter = Waiter()
    let lost = waiting.withLock { waiting in
      waiting.current = waiter
      return waiting.lost
    }
    defer { waiting.withLock { $0.current = nil } }
    if lost { throw Self.lost(failure.store) }
    Task(executorPreference: executor) {
      do {
        waiter.give(.success(try await work()))
      } catch {
        waiter.give(.failure(error))
      }
    }
    switch waiter.wait() {
    case .success(let value):
      guard let value = value as? T else {
        throw CofferError(
          .backendFailure, "A statement's answer was not of the type expected.", store: failure.store)
      }
      return value
    case .failure(let error):
      throw failure.error(error, while: action, entity: entity)
    }
  }

  /// The error for a connection lost during a step.
  private static func lost(_ store: String) -> CofferError {
    CofferError(
      .unavailable,
      "The connection to the server was lost during a migration step. The server rolls back what was not "
        + "committed; open the store again to run the steps that are missing.",
      store: store)
  }

  /// One statement's answer, and the semaphore the body's thread waits on for it.
  final class Waiter: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let answer = LockedState<Result<any Sendable, any Error>?>(nil)

    /// Keeps the first answer and wakes the waiting thread; later answers are dropped.
    func give(_ result: Result<any Sendable, any Error>) {
      let first = answer.withLock { answer in
        defer { if answer == nil { answer = result } }
        return answer == nil
      }
      if first { semaphore.signal() }
    }

    /// Blocks until the first answer.
    func wait() -> Result<any Sendable, any Error> {
      semaphore.wait()
      return answer.withLock { $0 } ?? .failure(CancellationError())
    }
  }
}
