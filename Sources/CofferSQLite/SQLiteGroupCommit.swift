@_spi(Backend) import Coffer
import Tracing

/// The batches waiting for the writer, applied together: every batch that arrives while the
/// writer is busy waits, and the next turn applies all of them in one transaction, each in a
/// savepoint of its own, with one commit — one `fsync` — for all.
///
/// Each batch stays all or nothing: one that fails is rolled back to its savepoint, alone, and
/// its caller gets its error; the others commit. No caller hears that its batch applied before
/// the commit that holds it is durable, and batches apply in the order they arrived, so each
/// sees the ones before it. With one writer at a time, a turn is one batch in one transaction,
/// as before; with many concurrent writers, a commit serves many of them.
final class SQLiteGroupCommit: Sendable {
  /// A batch and the caller waiting for it.
  struct Waiting: Sendable {
    let batch: Batch
    let caller: CheckedContinuation<ChangeSummary, any Error>
  }

  /// A batch to apply and the span of the call that sent it, when statements are traced: the
  /// writer's thread has no task to ask.
  struct Batch: Sendable {
    let changes: ChangeSet
    let span: InstrumentationContext?
  }

  private let state = LockedState<(waiting: [Waiting], turnScheduled: Bool)>(([], false))

  /// Applies `changes` in the next turn and returns its summary; a turn is scheduled on
  /// `queue` unless one is waiting to run. `applyTurn` applies the batches of a turn and returns
  /// a result for each, in order. `span` is the calling store call's span, when statements are
  /// traced.
  func apply(
    _ changes: ChangeSet, span: InstrumentationContext?, on queue: BlockingQueue,
    _ applyTurn: @escaping @Sendable ([Batch]) -> [Result<ChangeSummary, any Error>]
  ) async throws -> ChangeSummary {
    defer { queue.wokeUp() }
    return try await withCheckedThrowingContinuation { caller in
      let schedule = state.withLock { state in
        state.waiting.append(Waiting(batch: Batch(changes: changes, span: span), caller: caller))
        defer { state.turnScheduled = true }
        return !state.turnScheduled
      }
      if schedule { queue.schedule { self.runTurn(on: queue, applyTurn) } }
    }
  }

  /// Takes every batch waiting and applies them, then answers their callers. Runs on the
  /// queue's thread; a batch that arrives meanwhile schedules the next turn.
  private func runTurn(
    on queue: BlockingQueue, _ applyTurn: ([Batch]) -> [Result<ChangeSummary, any Error>]
  ) {
    let turn = state.withLock { state in
      state.turnScheduled = false
      defer { state.waiting = [] }
      return state.waiting
    }
    if turn.isEmpty { return }
    let results = applyTurn(turn.map(\.batch))
    for (waiting, result) in zip(turn, results) { queue.wake(waiting.caller, with: result) }
  }
}
