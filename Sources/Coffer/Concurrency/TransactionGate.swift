/// Lets a store's transactions run freely until they conflict; a transaction that conflicted
/// runs its retries alone, in order, and new transactions wait for the ones ahead of them.
///
/// Optimistic transactions that keep meeting the same rows can starve: each commit invalidates
/// the others' reads, and a loser may lose every time. So a transaction that conflicted runs
/// its retries holding this gate (``acquire()``), one at a time, first come first served. A
/// new transaction that finds the gate held or awaited waits its turn behind them
/// (``pass()``), but then runs without holding it, beside the other new ones: the retries of
/// one process no longer race its new transactions, and the gate never turns a busy store's
/// transactions into a queue that cannot drain. The gate is the app's, in memory: no backend
/// lock is held, readers and plain batches never wait for it, and other processes are still
/// met by preconditions.
final class TransactionGate: Sendable {
  private struct State {
    var held = false
    /// Tasks waiting, in arrival order: `true` for one that will hold the gate, `false` for one
    /// that only waits its turn.
    var waiting: [(holds: Bool, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = LockedState(State())

  /// The task holds the gate (so a transaction nested in a transaction does not wait for it).
  @TaskLocal static var isHeld = false

  /// Whether a new transaction should wait its turn: the gate is held or awaited.
  var isContended: Bool { state.withLock { $0.held || !$0.waiting.isEmpty } }

  /// Waits for the gate and holds it, first come first served.
  func acquire() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state -> Bool in
        if state.held || !state.waiting.isEmpty {
          state.waiting.append((true, continuation))
          return false
        }
        state.held = true
        return true
      }
      if now { continuation.resume() }
    }
  }

  /// Waits until every task that holds or awaited the gate before this call has had its turn,
  /// without holding it.
  func pass() async {
    await withCheckedContinuation { continuation in
      let now = state.withLock { state -> Bool in
        if state.held || !state.waiting.isEmpty {
          state.waiting.append((false, continuation))
          return false
        }
        return true
      }
      if now { continuation.resume() }
    }
  }

  /// Hands the gate to the next waiter that holds it, letting through every waiter that only
  /// waited its turn before it; or opens it.
  func release() {
    let resumed = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      state.held = false
      var resumed: [CheckedContinuation<Void, Never>] = []
      while !state.waiting.isEmpty {
        let next = state.waiting.removeFirst()
        resumed.append(next.continuation)
        if next.holds {
          state.held = true
          break
        }
      }
      return resumed
    }
    for continuation in resumed { continuation.resume() }
  }
}
