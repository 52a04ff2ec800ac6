import Synchronization

#if canImport(Darwin)
  import Darwin
#elseif canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#endif

/// Lets other tasks have the concurrency pool's threads between a store's reads.
///
/// A read from a file or memory store usually finishes without suspending: the rows are in
/// memory or in the operating system's cache, and the backend reads them on the calling task's
/// thread. A task that reads in a loop so keeps its pool thread, and a task waiting for one
/// waits until the loop ends — with as many reading tasks as pool threads (two on a small
/// machine), it never runs. The task that matters most is a writer whose commit has left the
/// disk: the backend's ``BlockingQueue`` has resumed it, and it needs a thread to return.
///
/// So before a read, a store yields (`Task.yield()`) when its backend's queue has woken a task
/// that has not run yet, and otherwise when none of its reads has yielded for ``interval``, so
/// that any other task of the process gets a thread too. A yield costs a trip through the
/// pool's queue, often a hand-over to another of its threads and a context switch: a loop of
/// reads with no writer waiting pays for one per interval, 20 milliseconds.
@usableFromInline
package final class ReadTurns: Sendable {
  /// How long a store's reads may go without yielding when no writer waits, in nanoseconds.
  @usableFromInline static let interval: UInt64 = 20_000_000
  /// When a read of the store last yielded, in ``coarseNanoseconds()``.
  @usableFromInline let lastYield = Atomic<UInt64>(0)
  /// The queue the backend's writes run on, when it has one.
  @usableFromInline let writes: BlockingQueue?

  /// Turns for the reads of a store over `backend`.
  package init(for backend: any StorageBackend) {
    writes = (backend as? any QueuedWrites)?.writeQueue
  }

  /// Yields when a writer waits for a thread, or when the store's reads have not yielded for
  /// ``interval``. Inlined into the store's reads: most calls only look at a counter and the
  /// clock.
  @inlinable
  package func take() async {
    if let writes, writes.hasWakingTask {
      await Task.yield()
      return
    }
    let now = Self.coarseNanoseconds()
    let last = lastYield.load(ordering: .relaxed)
    guard now &- last >= Self.interval,
      lastYield.compareExchange(expected: last, desired: now, ordering: .relaxed).exchanged
    else { return }
    await Task.yield()
  }

  /// A monotonic clock read at the cost of a memory load: its ticks are milliseconds apart,
  /// far finer than ``interval``.
  @inlinable
  static func coarseNanoseconds() -> UInt64 {
    #if canImport(Darwin)
      return clock_gettime_nsec_np(CLOCK_MONOTONIC_RAW_APPROX)
    #else
      var time = timespec()
      clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
      return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    #endif
  }
}

/// A backend of this package whose writes run on a ``BlockingQueue``: its store's reads give
/// way to a writer the queue has woken (see ``ReadTurns``).
package protocol QueuedWrites {
  /// The queue the backend's writes (and their `fsync`) run on.
  var writeQueue: BlockingQueue { get }
}
