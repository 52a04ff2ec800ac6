@_spi(Backend) import Coffer
import CofferWire
import Foundation
import NIOHTTP1

/// The served store's change feed, read over the wire: ``Coffer/Store/changes(after:follow:)``
/// and observation work on a remote store as on a local one.
///
/// A follower waits with a long poll on the server (`changes/wait`), which returns as soon as a
/// batch after its position commits. When the server cannot be reached — it is being restarted —
/// a wait returns after its timeout without an error, and the next read of the feed tries again
/// for ``RemoteBackend/Configuration/retryFor``; the position a follower keeps is its own, so
/// after a restart it goes on from there and misses nothing.
@_spi(Backend) extension RemoteBackend: ChangeRecording {
  /// Turns the served store's feed on (an admin token's scope).
  public func startRecordingChanges(retention: ChangeRetention) async throws {
    _ = try await call(
      .POST, "/v1/admin/changes/record", WireRetention(retention: Self.text(of: retention)), as: WireDone.self
    )
  }

  /// The served store's feed bounds, or `nil` when its feed is off.
  public func changeFeedBounds() async throws -> ChangeFeedBounds? {
    try await get("/v1/changes/bounds", as: WireBounds.self).feedBounds
  }

  /// The batches after `sequence`, at most `limit`.
  public func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges] {
    let answer = try await get(
      "/v1/changes?after=\(sequence)&limit=\(max(1, limit))", as: WireChangeBatches.self)
    return answer.batches.map(\.recorded)
  }

  /// Trims the served store's feed (an admin token's scope).
  public func trimChanges(_ trim: ChangeTrim) async throws {
    _ = try await call(.POST, "/v1/admin/changes/trim", WireTrim(trim), as: WireDone.self)
  }

  /// Waits on the server until a batch after `sequence` commits or `timeout` passes. Returns
  /// without an error when the server cannot be reached (after waiting a little, so a follower
  /// does not spin), and when the task is cancelled.
  public func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    try checkOpen()
    let started = ContinuousClock.now
    let milliseconds = max(1, min(30_000, Int(timeout.nanoseconds / 1_000_000)))
    do {
      _ = try await Self.call(
        transport, .GET, "/v1/changes/wait?after=\(sequence)&timeoutMs=\(milliseconds)", body: nil,
        retrying: false, name: name, as: WireReady.self, timeout: timeout + configuration.requestTimeout)
    } catch is CancellationError {
      return
    } catch let error as CofferError where error.code == .unavailable || error.code == .timedOut {
      // The server is away: wait out part of the timeout here, then let the caller read again.
      let left = timeout - (ContinuousClock.now - started)
      if left > .zero { try? await Task.sleep(for: min(left, .milliseconds(250))) }
    }
  }

  /// A retention as the URL option writes it: `all`, a number of batches, or an age in seconds.
  static func text(of retention: ChangeRetention) -> String {
    switch retention {
    case .all: return "all"
    case .count(let count): return String(max(1, count))
    case .age(let age):
      return String(max(1, age.components.seconds + (age.components.attoseconds > 0 ? 1 : 0))) + "s"
    }
  }
}
