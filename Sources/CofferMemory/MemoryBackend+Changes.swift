@_spi(Backend) import Coffer
import Foundation

extension MemoryBackend {
  /// Applies a batch to the tables under their lock, recording it in the feed when the feed is
  /// on: the tables are changed and the batch recorded before the lock is released. `recorded`
  /// says whether followers are to be woken (after the lock is released).
  func applyRecording(_ changes: ChangeSet, to tables: inout InMemoryTables, recorded: inout Bool) throws
    -> ChangeSummary
  {
    guard storage.feed.withLock({ $0.recording }) else { return try tables.apply(changes) }
    var collector = ChangeCollector()
    let summary = try tables.apply(changes, collecting: &collector)
    recorded = record(collector)
    return summary
  }

  /// Appends a batch's changes to the feed; called with the tables' lock held.
  func record(_ collector: ChangeCollector) -> Bool {
    guard let payload = collector.encoded() else { return false }
    let micros = Value.microseconds(since1970: Date())
    let retention = self.retention.withLock { $0 }
    storage.feed.withLock { feed in
      let sequence = feed.append(payload, at: micros)
      if let trim = retention.trim(afterCommitting: sequence, at: micros) { feed.trim(trim) }
    }
    return true
  }

  /// Turns the feed on for the store's every handle.
  @_spi(Backend) public func startRecordingChanges(retention: ChangeRetention) async throws {
    try checkOpen()
    self.retention.withLock { $0 = retention }
    storage.tables.withLock { _ in storage.feed.withLock { $0.recording = true } }
  }

  /// The feed's bounds, `nil` while it is off.
  @_spi(Backend) public func changeFeedBounds() async throws -> ChangeFeedBounds? {
    try checkOpen()
    return storage.feed.withLock { $0.bounds }
  }

  /// The batches after `sequence`, found by binary search.
  @_spi(Backend) public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]
  {
    try checkOpen()
    return try storage.feed.withLock { try $0.read(after: sequence, limit: limit, store: name) }
  }

  /// Trims the feed.
  @_spi(Backend) public func trimChanges(_ trim: ChangeTrim) async throws {
    try checkOpen()
    try storage.feed.withLock { feed in
      guard feed.recording else { throw CofferError.changeFeedOff(store: name) }
      feed.trim(trim)
    }
  }

  /// Waits on the store's signal: every writer is in this process.
  @_spi(Backend) public func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    let generation = storage.signal.generation
    if storage.feed.withLock({ $0.last > sequence }) { return }
    await storage.signal.wait(since: generation, timeout: timeout)
  }
}

@_spi(Backend) extension MemoryBackend: ChangeRecording {}
