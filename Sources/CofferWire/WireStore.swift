@_spi(Backend) import Coffer
import Foundation

/// The limits a server enforces, so a client can stay within them.
package struct WireLimits: Codable, Sendable, Hashable {
  /// The most rows one answer holds.
  package var maxRows: Int
  /// The largest request body, in bytes.
  package var maxBodyBytes: Int
  /// How deeply a filter may nest.
  package var maxFilterDepth: Int

  /// Limits.
  package init(maxRows: Int, maxBodyBytes: Int, maxFilterDepth: Int) {
    self.maxRows = maxRows
    self.maxBodyBytes = maxBodyBytes
    self.maxFilterDepth = maxFilterDepth
  }
}

/// What a served store is: `GET …/v1/store`.
package struct WireStoreInfo: Codable, Sendable, Hashable {
  /// The backend's name (no URL, no secret).
  package var name: String
  /// ``BackendCapabilities/names``.
  package var capabilities: [String]
  /// The optional abilities the backend adopts (`snapshots`, `changeFeed`…).
  package var abilities: [String]
  /// The server's limits.
  package var limits: WireLimits

  /// Store information.
  package init(name: String, capabilities: [String], abilities: [String], limits: WireLimits) {
    self.name = name
    self.capabilities = capabilities
    self.abilities = abilities
    self.limits = limits
  }

  /// The capabilities as the option set (unknown names ignored).
  package var capabilitySet: BackendCapabilities {
    var set: BackendCapabilities = []
    let known: [String: BackendCapabilities] = [
      "reopenable": .reopenable, "durable": .durable, "multiProcess": .multiProcess,
      "crossEntityTransactions": .crossEntityTransactions, "schemaEvolution": .schemaEvolution,
      "preconditions": .preconditions, "observesOtherHandles": .observesOtherHandles,
    ]
    for name in capabilities { if let flag = known[name] { set.insert(flag) } }
    return set
  }
}

/// Schemas to prepare: `{"schemas":[…]}` (empty: only list).
package struct WirePrepare: Codable, Sendable, Hashable {
  /// The schemas.
  package var schemas: [EntitySchema]

  /// A prepare request.
  package init(schemas: [EntitySchema]) { self.schemas = schemas }
}

/// Every stored schema, sorted by name.
package struct WireSchemas: Codable, Sendable, Hashable {
  /// The schemas.
  package var schemas: [EntitySchema]

  /// Schemas.
  package init(schemas: [EntitySchema]) { self.schemas = schemas }
}

/// An empty object, the answer of routes that only act.
package struct WireDone: Codable, Sendable, Hashable {
  /// `{}`.
  package init() {}
}

/// The health answer.
package struct WireHealth: Codable, Sendable, Hashable {
  /// `ok`.
  package var status: String

  /// Healthy.
  package init() { status = "ok" }
}

/// The paths and headers of the API, for both sides.
package enum WirePath {
  /// The version segment every route after a store prefix starts with.
  package static let version = "v1"
  /// The OpenAPI document, at the server's root.
  package static let openAPI = "/openapi.json"
  /// The header that carries a batch's idempotency key.
  package static let idempotencyKey = "Idempotency-Key"
  /// The longest idempotency key.
  package static let maxIdempotencyKeyLength = 200
  /// The routes after `PREFIX/v1/`.
  package static let health = "health"
  /// Store information.
  package static let store = "store"
  /// Prepare and list.
  package static let prepare = "prepare"
  /// Read rows.
  package static let read = "read"
  /// Count rows.
  package static let count = "count"
  /// Rows by id.
  package static let get = "get"
  /// Aggregates.
  package static let aggregate = "aggregate"
  /// Batches.
  package static let apply = "apply"
  /// The backend's commit marker.
  package static let commitMarker = "commit-marker"
  /// The change feed's bounds.
  package static let changesBounds = "changes/bounds"
  /// Batches of the change feed.
  package static let changes = "changes"
  /// Wait for a change.
  package static let changesWait = "changes/wait"
  /// The change feed as server-sent events.
  package static let changesStream = "changes/stream"
  /// Start recording the feed (admin).
  package static let adminRecord = "admin/changes/record"
  /// Trim the feed (admin).
  package static let adminTrim = "admin/changes/trim"
}

/// The JSON coders both sides use: Foundation's defaults (numbers exact, bytes as base64);
/// ``Value`` carries its own kinds.
package enum WireCoding {
  /// An encoder for request and response bodies.
  package static func encoder() -> JSONEncoder { JSONEncoder() }
  /// A decoder for request and response bodies.
  package static func decoder() -> JSONDecoder { JSONDecoder() }
}

/// The backend's marker of the last commit: `{"marker":7}`, or `{"marker":null}` when it keeps none.
package struct WireCommitMarker: Codable, Sendable, Hashable {
  /// The marker.
  package var marker: UInt64?

  /// A marker.
  package init(marker: UInt64?) { self.marker = marker }

  private enum CodingKeys: String, CodingKey { case marker }

  /// Encodes the marker, writing null when there is none.
  package func encode(to encoder: any Encoder) throws {
    var container = encoder.container(keyedBy: CodingKeys.self)
    try container.encode(marker, forKey: .marker)
  }
}
