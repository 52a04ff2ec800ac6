#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// State guarded by a readers–writer lock: any number of readers at once, or one writer.
///
/// ``LockedState`` lets one thread in at a time, so readers that do real work under it (a
/// lookup that misses the cache) queue behind each other and sleep in the kernel. Here readers
/// share the lock and only writers take it alone. On Linux the lock prefers writers: once a
/// writer waits, new readers wait behind it, so a steady stream of reads never holds a write
/// back for good. It is a pthread lock, which ThreadSanitizer understands (see
/// ``LockedState``).
package final class SharedLockedState<State>: @unchecked Sendable {
  // `@unchecked Sendable`: `state` is written only inside `withLock`, under the write lock, and
  // read only inside `withSharedLock` or `withLock`.
  private let lock: UnsafeMutablePointer<pthread_rwlock_t>
  /// Unchecked exclusivity: the lock already orders every access, so the runtime's own check
  /// of each access would only repeat it (and would report readers sharing the lock).
  @exclusivity(unchecked) private var state: State

  package init(_ state: State) {
    self.state = state
    lock = .allocate(capacity: 1)
    lock.initialize(to: pthread_rwlock_t())
    var attributes = pthread_rwlockattr_t()
    pthread_rwlockattr_init(&attributes)
    #if canImport(Glibc)
      pthread_rwlockattr_setkind_np(&attributes, Int32(PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP))
    #endif
    pthread_rwlock_init(lock, &attributes)
    pthread_rwlockattr_destroy(&attributes)
  }

  deinit {
    pthread_rwlock_destroy(lock)
    lock.deinitialize(count: 1)
    lock.deallocate()
  }

  /// Runs `body` with exclusive access to the state: no reader or other writer runs meanwhile.
  /// `body` must not take this lock again (it is not recursive) and must not suspend.
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    pthread_rwlock_wrlock(lock)
    defer { pthread_rwlock_unlock(lock) }
    return try body(&state)
  }

  /// Runs `body` with shared access to the state: other readers may run at the same time,
  /// writers wait until it returns. `body` must only read, must not take this lock again and
  /// must not suspend.
  package func withSharedLock<Result>(_ body: (borrowing State) throws -> Result) rethrows -> Result {
    pthread_rwlock_rdlock(lock)
    defer { pthread_rwlock_unlock(lock) }
    return try body(state)
  }
}
