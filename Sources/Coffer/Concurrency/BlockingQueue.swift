import Dispatch
import Synchronization
import Tracing

/// A serial queue of a store's own for work that blocks — `fsync`, file writes, waiting for a
/// lock another process holds — so that it never runs on the Swift concurrency pool.
///
/// The pool has one thread per core (two on a small machine). A commit that blocked one of
/// them in `fsync` would stall every other task of the process, readers included, until the
/// disk answered. A backend runs its writes through ``run(_:)`` instead: the calling task
/// suspends, its pool thread goes on with other tasks, and the write runs on a thread of this
/// queue, one at a time, in the order they were asked for.
///
/// Like ``LockedState``, this is plumbing for the backends of this package (`package` access).
@usableFromInline
package final class BlockingQueue: Sendable {
  private let queue: DispatchQueue
  /// Tasks whose work this queue has finished and which wait for a pool thread to go on.
  @usableFromInline let waking = Atomic<Int>(0)

  /// A queue; `label` names its thread in debuggers and crash reports.
  package init(label: String) { queue = DispatchQueue(label: label) }

  /// Runs `body` on the queue's thread while the calling task waits, and returns its result or
  /// rethrows its error.
  ///
  /// The calling task's trace context (the span of the store call it is in) is bound on the
  /// queue's thread while `body` runs, so what `body` traces there — a statement, a migration's
  /// steps — is a child of that call's span. The queue's thread has no task to ask otherwise.
  package func run<R: Sendable>(_ body: @Sendable () throws -> R) async throws -> R {
    defer { wokeUp() }
    let context = InstrumentationContext.current
    return try await withoutActuallyEscaping(body) { escapable in
      let job = Job(escapable, context: context)
      return try await withCheckedThrowingContinuation { continuation in
        queue.async { self.wake(continuation, with: job.run()) }
      }
    }
  }

  /// Whether a task whose work this queue finished waits for a pool thread: a store's reads
  /// give way to it (see ``ReadTurns``).
  @inlinable
  package var hasWakingTask: Bool { waking.load(ordering: .relaxed) > 0 }

  /// Resumes a task waiting for work of this queue, counting it as waking until it calls
  /// ``wokeUp()``.
  package func wake<R: Sendable>(
    _ continuation: CheckedContinuation<R, any Error>, with result: Result<R, any Error>
  ) {
    waking.add(1, ordering: .relaxed)
    continuation.resume(with: result)
  }

  /// Called by a task ``wake(_:with:)`` resumed, once it runs again.
  package func wokeUp() { waking.subtract(1, ordering: .relaxed) }

  /// Runs `body` on the queue's thread, after the work already asked for, without waiting.
  package func schedule(_ body: @escaping @Sendable () -> Void) { queue.async(execute: body) }

  /// A closure carried to the queue's thread and let go of as soon as it has run, before the
  /// waiting task resumes: `withoutActuallyEscaping` checks that nothing still holds it then.
  private final class Job<R>: @unchecked Sendable {
    // `@unchecked Sendable`: `body` is set once and then used only by `run`, which the queue
    // calls exactly once.
    private var body: (@Sendable () throws -> R)?
    private let context: InstrumentationContext?

    init(_ body: @escaping @Sendable () throws -> R, context: InstrumentationContext?) {
      self.body = body
      self.context = context
    }

    func run() -> Result<R, any Error> {
      let result: Result<R, any Error>
      if let body, let context {
        result = InstrumentationContext.$current.withValue(context) { Result { try body() } }
      } else if let body {
        result = Result { try body() }
      } else {
        result = .failure(CancellationError())  // Unreachable: the queue runs each job once.
      }
      body = nil
      return result
    }
  }
}
