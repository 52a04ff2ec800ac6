/// Lets a store's transactions run freely until they conflict, then one at a time, in order.
///
/// Optimistic transactions that keep meeting the same rows can starve: each commit invalidates
/// the others' reads, and a loser may lose every time. So a transaction that conflicted runs
/// its retries holding this gate, and while anyone holds or waits for it, new transactions of
/// the store queue for it too. Transactions of one process then no longer invalidate one
/// another; once the queue drains, they run freely again. The gate is the app's, in memory: no
/// backend lock is held, readers and plain batches never wait for it, and other processes are
/// still met by preconditions.
final class TransactionGate: Sendable {
  private struct State {
    var held = false
    var waiting: [CheckedContinuation<Void, Never>] = []
  }

  private let state = LockedState(State())

  /// The task holds the gate (so a transaction nested in a transaction does not wait for it).
  @TaskLocal static var isHeld = false

  /// Whether transactions should queue: the gate is held or awaited.
  var isContended: Bool { state.withLock { $0.held || !$0.waiting.isEmpty } }

  /// Waits for the gate, first come first served.
  func acquire() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state -> Bool in
        if state.held {
          state.waiting.append(continuation)
          return false
        }
        state.held = true
        return true
      }
      if now { continuation.resume() }
    }
  }

  /// Hands the gate to the next waiter, or opens it.
  func release() {
    let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
      if state.waiting.isEmpty {
        state.held = false
        return nil
      }
      return state.waiting.removeFirst()
    }
    next?.resume()
  }
}
