@_spi(Backend) import Coffer
import CofferWire
import Foundation
import NIOHTTP1

// What the served store does beyond the seven requirements, over the wire: aggregates computed
// on the server, and the server's commit marker.

@_spi(Backend) extension RemoteBackend: AggregateComputing {
  /// Computes an aggregate on the server (in its store's engine where it has one).
  public func aggregate(_ aggregation: Aggregation) async throws -> [AggregateGroup<Value, Value>] {
    let answer = try await call(.POST, "/v1/aggregate", WireAggregation(aggregation), as: WireGroups.self)
    return answer.groups.map { AggregateGroup(key: $0.key, value: $0.value) }
  }
}

@_spi(Backend) extension RemoteBackend: CommitObserving {
  /// The served store's commit marker, which moves with every batch committed through the
  /// server (or beside it, when the served store sees other handles' commits); `nil` when the
  /// served store cannot tell.
  public func commitMarker() async throws -> UInt64? {
    guard servesCommitMarker else { return nil }
    return try await get("/v1/commit-marker", as: WireMarker.self).marker
  }
}

/// The server's commit marker: `{"marker":N}` or `{"marker":null}`.
struct WireMarker: Codable, Sendable {
  var marker: UInt64?
}
