@_spi(Backend) import Coffer

/// A continuation that the first of several racers resumes, with a result or an error; every
/// later answer is dropped. Work that may never finish (a statement postgres-nio never
/// completes) races a timer or a lost connection this way, and its caller hears from whichever
/// comes first.
final class FirstAnswer<R: Sendable>: Sendable {
  private let continuation: CheckedContinuation<Result<R, any Error>, Never>
  private let answered = LockedState(false)

  init(_ continuation: CheckedContinuation<Result<R, any Error>, Never>) { self.continuation = continuation }

  /// Resumes the continuation with `result` unless another answer came first; returns whether
  /// this one was first.
  @discardableResult
  func give(_ result: Result<R, any Error>) -> Bool {
    let first = answered.withLock { answered in
      defer { answered = true }
      return !answered
    }
    if first { continuation.resume(returning: result) }
    return first
  }

  /// Runs `work` and gives what it returns or throws.
  func give(from work: () async throws -> R) async {
    do {
      give(.success(try await work()))
    } catch {
      give(.failure(error))
    }
  }
}
