@_spi(Backend) import Coffer

/// A readers–writer gate for async code: batches pass it together (``shared(_:)``), a schema
/// change passes it alone (``exclusive(_:)``), waiting for the batches inside to finish and
/// holding new ones back. Waiting suspends the task; no thread blocks.
final class SchemaGate: Sendable {
  private struct State {
    var sharing = 0
    var exclusive = false
    /// Tasks waiting to enter, in arrival order, and whether each wants to be alone.
    var waiting: [(exclusive: Bool, continuation: CheckedContinuation<Void, Never>)] = []
  }

  private let state = LockedState(State())

  /// Runs `body` beside other shared holders, never during an exclusive one.
  func shared<R>(_ body: () async throws -> R) async throws -> R {
    await enter(exclusive: false)
    defer { leave(exclusive: false) }
    return try await body()
  }

  /// Runs `body` alone.
  func exclusive<R>(_ body: () async throws -> R) async throws -> R {
    await enter(exclusive: true)
    defer { leave(exclusive: true) }
    return try await body()
  }

  private func enter(exclusive: Bool) async {
    let entered = state.withLock { state -> Bool in
      // First come, first served: a waiting schema change keeps later batches out.
      guard state.waiting.isEmpty, !state.exclusive, !exclusive || state.sharing == 0 else { return false }
      if exclusive { state.exclusive = true } else { state.sharing += 1 }
      return true
    }
    if entered { return }
    await withCheckedContinuation { continuation in
      let admitted = state.withLock { state -> Bool in
        if state.waiting.isEmpty, !state.exclusive, !exclusive || state.sharing == 0 {
          if exclusive { state.exclusive = true } else { state.sharing += 1 }
          return true
        }
        state.waiting.append((exclusive, continuation))
        return false
      }
      if admitted { continuation.resume() }
    }
  }

  private func leave(exclusive: Bool) {
    let admitted = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      if exclusive { state.exclusive = false } else { state.sharing -= 1 }
      var admitted: [CheckedContinuation<Void, Never>] = []
      while let next = state.waiting.first {
        if next.exclusive {
          guard state.sharing == 0, !state.exclusive, admitted.isEmpty else { break }
          state.exclusive = true
        } else {
          guard !state.exclusive else { break }
          state.sharing += 1
        }
        admitted.append(next.continuation)
        state.waiting.removeFirst()
        if next.exclusive { break }
      }
      return admitted
    }
    for continuation in admitted { continuation.resume() }
  }
}
