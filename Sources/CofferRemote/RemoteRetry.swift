@_spi(Backend) import Coffer
import Foundation

/// How long to wait between two tries of a request whose answer was lost or whose server could
/// not be reached: 50 ms, then twice as long each time, at most a second, never past the end of
/// the time left for retrying.
struct RemoteBackoff {
  let deadline: ContinuousClock.Instant
  private var next = Duration.milliseconds(50)

  init(retryFor: Duration) {
    deadline = .now + retryFor
  }

  /// Waits before the next try and returns `true`, or returns `false` at once when the time for
  /// retrying is over.
  ///
  /// - Throws: `CancellationError` when the task is cancelled while it waits.
  mutating func wait() async throws -> Bool {
    let now = ContinuousClock.now
    guard now < deadline else { return false }
    let pause = min(next, deadline - now)
    next = min(next * 2, .seconds(1))
    try await Task.sleep(for: pause)
    return true
  }
}
