import Foundation

/// State guarded by a lock that ThreadSanitizer understands.
///
/// It plays the part of `Synchronization.Mutex` for ``ModelGraph``, ``Store`` and every backend
/// in this package (hence `package` access). On
/// Linux, `Mutex` is built on atomics and futex calls in the uninstrumented standard library,
/// so ThreadSanitizer sees no ordering between critical sections and reports every access
/// under the lock as a race; a pthread mutex (what `NSLock` is) is intercepted, so the
/// sanitizer checks these types for real.
package final class LockedState<State>: @unchecked Sendable {
  // `@unchecked Sendable`: `state` is read and written only inside `withLock`, under `lock`.
  private let lock = NSLock()
  /// Unchecked exclusivity: the lock already makes every access exclusive, so the runtime's
  /// own check of each access would only repeat it.
  @exclusivity(unchecked) private var state: State

  package init(_ state: State) { self.state = state }

  /// Runs `body` with exclusive access to the state. `body` must not call `withLock` on the
  /// same value (the lock is not recursive) and must not suspend.
  package func withLock<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
    lock.lock()
    defer { lock.unlock() }
    return try body(&state)
  }
}
