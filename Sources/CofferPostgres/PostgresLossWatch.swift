@_spi(Backend) import Coffer
import NIOCore
import PostgresNIO

/// Watches one pooled connection for its close, for the batch running on it at the time.
///
/// The pool makes one when it opens the connection and hooks it to the connection's close
/// once. A batch arms it with what to do if the connection is lost while the batch runs, and
/// disarms it when the batch is done. Hooking every batch to the close itself would keep each
/// batch's handler alive until the connection closed: a store that applies a million batches
/// on one connection would hold a million of them.
final class PostgresLossWatch: Sendable {
  private let state = LockedState<(closed: Bool, onLoss: (@Sendable () -> Void)?)>((false, nil))

  /// Runs `onLoss` when the connection closes before ``disarm()``; at once if it already has.
  func arm(_ onLoss: @escaping @Sendable () -> Void) {
    let closed = state.withLock { state in
      if !state.closed { state.onLoss = onLoss }
      return state.closed
    }
    if closed { onLoss() }
  }

  /// Forgets what ``arm(_:)`` was given.
  func disarm() { state.withLock { $0.onLoss = nil } }

  /// Called once, when the connection has closed.
  func connectionClosed() {
    let onLoss = state.withLock { state in
      state.closed = true
      defer { state.onLoss = nil }
      return state.onLoss
    }
    onLoss?()
  }
}
