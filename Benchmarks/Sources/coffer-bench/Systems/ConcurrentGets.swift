import Foundation
import Synchronization

/// What one task of the concurrent gets did: how many gets, and the sum of the thread ids it
/// read (-1 for a message that was missing), which the suite checks.
struct GetTally: Sendable {
  var done = 0
  var threadSum: Int64 = 0
}

/// Runs `body(0)`, …, `body(count - 1)` on `count` new threads at once and returns their results
/// in that order once the last has finished, without blocking the caller's thread meanwhile.
func onThreads<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) -> T) async -> [T] {
  let gathering = Gathering<T>(count)
  return await withCheckedContinuation { continuation in
    for index in 0..<count {
      Thread {
        let result = body(index)
        let finished: [T]? = gathering.state.withLock { state in
          state.results[index] = result
          state.left -= 1
          return state.left == 0 ? state.results.compactMap { $0 } : nil
        }
        if let finished { continuation.resume(returning: finished) }
      }.start()
    }
  }
}

/// The results of threads, and how many are still running, under a lock.
private final class Gathering<T: Sendable>: Sendable {
  let state: Mutex<(results: [T?], left: Int)>
  init(_ count: Int) { state = Mutex((Array(repeating: nil, count: count), count)) }
}

/// Runs `body(0)`, …, `body(count - 1)` as `count` child tasks at once, for systems whose API is
/// asynchronous, and returns their results in that order.
func inTasks<T: Sendable>(_ count: Int, _ body: @escaping @Sendable (Int) async throws -> T) async throws
  -> [T]
{
  try await withThrowingTaskGroup(of: (Int, T).self) { group in
    for index in 0..<count { group.addTask { (index, try await body(index)) } }
    var results = [T?](repeating: nil, count: count)
    for try await (index, result) in group { results[index] = result }
    return results.compactMap { $0 }
  }
}
