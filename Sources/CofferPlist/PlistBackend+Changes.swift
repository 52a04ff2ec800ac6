@_spi(Backend) import Coffer
import Foundation

extension PlistBackend {
  /// Turns the feed on, writing the file at once so that the store opens with it on from now.
  @_spi(Backend) public func startRecordingChanges(retention: ChangeRetention) async throws {
    self.retention.withLock { $0 = retention }
    try await blocking.run { [self] in
      try writer.withLock { state in
        guard state.lock != nil else { throw closedError() }
        if feed.withLock({ $0.recording }) { return }
        var on = feed.withLock { $0 }
        on.recording = true
        try Self.write(&state, to: file, format: format, feed: on, logger: logger)
        feed.withLock { $0.recording = true }
      }
    }
  }

  /// The feed's bounds, `nil` while it is off.
  @_spi(Backend) public func changeFeedBounds() async throws -> ChangeFeedBounds? {
    _ = try snapshot()
    return feed.withLock { $0.bounds }
  }

  /// The batches after `sequence`, found by binary search.
  @_spi(Backend) public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges]
  {
    _ = try snapshot()
    return try feed.withLock { try $0.read(after: sequence, limit: limit, store: name) }
  }

  /// Trims the feed; the file holds the trim from its next write (at once with
  /// ``Persistence/immediate``).
  @_spi(Backend) public func trimChanges(_ trim: ChangeTrim) async throws {
    try await blocking.run { [self] in
      try writer.withLock { state in
        guard state.lock != nil else { throw closedError() }
        var trimmed = feed.withLock { $0 }
        guard trimmed.recording else { throw CofferError.changeFeedOff(store: name) }
        trimmed.trim(trim)
        if configuration.persistence == .immediate {
          try Self.write(&state, to: file, format: format, feed: trimmed, logger: logger)
        } else {
          state.isDirty = true
        }
        feed.withLock { $0 = trimmed }
      }
    }
  }

  /// Waits for this handle's next commit: the only writer of the file.
  @_spi(Backend) public func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    try await signal.waitForChanges(after: sequence, timeout: timeout, poll: .seconds(1)) {
      try await changeFeedBounds()
    }
  }
}

@_spi(Backend) extension PlistBackend: ChangeRecording {}
