@_spi(Backend) import Coffer
import Foundation

/// The change feed of one in-memory store: its recorded batches, held with its tables and
/// appended to while the tables' lock is held, so numbers follow commit order.
struct MemoryFeed {
  var recording = false
  var trimmedThrough: UInt64 = 0
  var last: UInt64 = 0
  /// The batches kept, in order.
  var batches: [RecordedChanges] = []

  mutating func trim(_ trim: ChangeTrim) {
    let cut: Int
    switch trim {
    case .through(let sequence):
      cut = batches.firstIndex { $0.sequence > sequence } ?? batches.count
      trimmedThrough = max(trimmedThrough, min(sequence, last))
    case .committedBefore(let micros):
      cut = batches.firstIndex { $0.committedAt >= micros } ?? batches.count
      if cut > 0 { trimmedThrough = max(trimmedThrough, batches[cut - 1].sequence) }
    }
    batches.removeFirst(cut)
  }
}

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
      feed.last += 1
      feed.batches.append(RecordedChanges(sequence: feed.last, committedAt: micros, payload: payload))
      if let trim = retention.trim(afterCommitting: feed.last, at: micros) { feed.trim(trim) }
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
    return storage.feed.withLock { feed in
      feed.recording ? ChangeFeedBounds(trimmedThrough: feed.trimmedThrough, last: feed.last) : nil
    }
  }

  /// The batches after `sequence`, found by binary search.
  @_spi(Backend) public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]
  {
    try checkOpen()
    return try storage.feed.withLock { feed in
      guard feed.recording else { throw CofferError.changeFeedOff(store: name) }
      if sequence < feed.trimmedThrough {
        throw CofferError.changesTrimmed(after: sequence, trimmedThrough: feed.trimmedThrough, store: name)
      }
      var low = 0
      var high = feed.batches.count
      while low < high {
        let middle = (low + high) / 2
        if feed.batches[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
      }
      return Array(feed.batches[low..<min(feed.batches.count, low + max(limit, 1))])
    }
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
