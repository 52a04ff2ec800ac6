/// A change feed kept in memory as an array of recorded batches: the feed of the memory
/// backend, and of the plist backend, which writes it into the store file with the rows.
/// Callers append and trim it under the same lock as the rows they change.
package struct RecordedChangeLog: Sendable, Equatable {
  /// Whether the store records a feed (it keeps doing so once on).
  package var recording = false
  /// The highest number trimmed away; reading after a smaller one is refused.
  package var trimmedThrough: UInt64 = 0
  /// The number of the newest batch, or `trimmedThrough` when none was recorded since.
  package var last: UInt64 = 0
  /// The batches kept, in order.
  package var batches: [RecordedChanges] = []

  /// An empty log, on or off.
  package init(recording: Bool = false, trimmedThrough: UInt64 = 0, last: UInt64 = 0) {
    self.recording = recording
    self.trimmedThrough = trimmedThrough
    self.last = last
  }

  /// The feed's bounds, `nil` while it is off.
  package var bounds: ChangeFeedBounds? {
    recording ? ChangeFeedBounds(trimmedThrough: trimmedThrough, last: last) : nil
  }

  /// Appends a batch's payload as the next number, committed at `micros`.
  @discardableResult
  package mutating func append(_ payload: [UInt8], at micros: Int64) -> UInt64 {
    last += 1
    batches.append(RecordedChanges(sequence: last, committedAt: micros, payload: payload))
    return last
  }

  /// Removes batches as `trim` says.
  package mutating func trim(_ trim: ChangeTrim) {
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

  /// The batches after `sequence`, at most `limit`, for ``ChangeRecording/readChanges(after:limit:)``.
  ///
  /// - Throws: ``CofferError/Code/unsupported`` while the feed is off,
  ///   ``CofferError/Code/changesTrimmed`` when batches after `sequence` were trimmed.
  package func read(after sequence: UInt64, limit: Int, store: String) throws -> [RecordedChanges] {
    guard recording else { throw CofferError.changeFeedOff(store: store) }
    if sequence < trimmedThrough {
      throw CofferError.changesTrimmed(after: sequence, trimmedThrough: trimmedThrough, store: store)
    }
    return Array(batches(after: sequence, limit: limit))
  }

  /// The batches numbered above `sequence`, at most `limit`, found by binary search.
  package func batches(after sequence: UInt64, limit: Int) -> ArraySlice<RecordedChanges> {
    var low = 0
    var high = batches.count
    while low < high {
      let middle = (low + high) / 2
      if batches[middle].sequence <= sequence { low = middle + 1 } else { high = middle }
    }
    return batches[low..<min(batches.count, low + max(limit, 1))]
  }
}
