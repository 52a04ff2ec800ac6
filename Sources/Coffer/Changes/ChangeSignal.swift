/// Wakes the tasks that follow a change feed when this process commits a batch: what a
/// backend's ``ChangeRecording/waitForChanges(after:timeout:)`` waits on, so a follower in the
/// same process hears of a commit at once instead of at its next poll.
@_spi(Backend) public final class ChangeSignal: Sendable {
  private enum Slot {
    /// The waiter is on its way to suspending.
    case pending
    case waiting(CheckedContinuation<Void, Never>)
  }
  private struct State {
    var generation: UInt64 = 0
    var nextWaiter: UInt64 = 0
    /// The waiters not yet woken; a waiter missing here was woken before it suspended.
    var waiters: [UInt64: Slot] = [:]
  }
  private let state = LockedState(State())

  /// A signal no one waits on yet.
  public init() {}

  /// How many times ``notify()`` was called: pass it to ``wait(since:timeout:)``.
  public var generation: UInt64 { state.withLock { $0.generation } }

  /// Wakes every task waiting.
  public func notify() {
    let woken = state.withLock { state in
      state.generation &+= 1
      defer { state.waiters.removeAll() }
      return Array(state.waiters.values)
    }
    // Resumed after the lock is released.
    for case .waiting(let continuation) in woken { continuation.resume() }
  }

  /// Returns once `bounds` reports a batch numbered after `sequence`, once `timeout` has passed,
  /// or soon after the task is cancelled: woken at once by ``notify()`` for this process's
  /// commits, and asking `bounds` again every `poll` for another handle's or process's.
  public func waitForChanges(
    after sequence: UInt64, timeout: Duration, poll: Duration,
    bounds: () async throws -> ChangeFeedBounds?
  ) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline, !Task.isCancelled {
      let seen = generation
      if let bounds = try await bounds(), bounds.last > sequence { return }
      await wait(since: seen, timeout: min(poll, deadline - clock.now))
    }
  }

  /// Returns once ``notify()`` was called after ``generation`` was `generation`, once `timeout`
  /// has passed, or soon after the task is cancelled, whichever comes first.
  public func wait(since generation: UInt64, timeout: Duration) async {
    let id: UInt64? = state.withLock { state in
      guard state.generation == generation else { return nil }
      state.nextWaiter &+= 1
      state.waiters[state.nextWaiter] = .pending
      return state.nextWaiter
    }
    guard let id else { return }
    let timer = Task { [weak self] in
      try? await Task.sleep(for: timeout)
      self?.wake(id)
    }
    defer { timer.cancel() }
    await withTaskCancellationHandler {
      await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
        let parked = state.withLock { state in
          guard state.waiters[id] != nil else { return false }
          state.waiters[id] = .waiting(continuation)
          return true
        }
        if !parked { continuation.resume() }
      }
    } onCancel: {
      wake(id)
    }
  }

  private func wake(_ id: UInt64) {
    let slot = state.withLock { $0.waiters.removeValue(forKey: id) }
    if case .waiting(let continuation) = slot { continuation.resume() }
  }
}
