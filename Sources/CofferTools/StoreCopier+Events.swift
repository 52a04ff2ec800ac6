@_spi(Backend) import Coffer

/// What a copy run through ``StoreCopier/events()`` tells, in order: its progress, then the
/// report it ended with.
public enum CopyEvent: Sendable {
  /// How far the copy got: sent after every batch, and once per entity before its first.
  /// Progress may be coalesced when the reader falls behind: the latest always arrives.
  case progress(CopyProgress)
  /// The copy ended; what it copied and whether the digests matched. Always the last event.
  case finished(CopyReport)
}

extension StoreCopier {
  /// Starts the copy and returns what it does as an asynchronous sequence: progress events,
  /// then ``CopyEvent/finished(_:)`` with the report. An error ends the sequence by being
  /// thrown from it.
  ///
  /// ```swift
  /// for try await event in StoreCopier(from: source, to: target).events() {
  ///   switch event {
  ///   case .progress(let progress): print(progress.rowsCopied, "of", progress.totalRows)
  ///   case .finished(let report): precondition(report.isVerified)
  ///   }
  /// }
  /// ```
  ///
  /// Leaving the loop early, or cancelling the task that iterates, cancels the copy: it stops
  /// after the batch it is writing, whose rows stay committed, and a run with ``resume``
  /// continues after them.
  public func events() -> AsyncThrowingStream<CopyEvent, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(
      of: CopyEvent.self, bufferingPolicy: .bufferingNewest(64))
    let copier = self
    let task = Task {
      do {
        let report = try await copier.run { continuation.yield(.progress($0)) }
        continuation.yield(.finished(report))
        continuation.finish()
      } catch {
        continuation.finish(throwing: error)
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }
}
