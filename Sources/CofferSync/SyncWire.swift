@_spi(Backend) import Coffer
import CofferWire
import Foundation

/// The sync routes of `coffer serve`, after `PREFIX/v1/` (see ``SyncServing``).
package enum SyncWirePath {
  /// `GET`: the server's replica: its id, the schemas and entities the token may sync.
  package static let replica = "sync/replica"
  /// `POST`: prepare an entity the client syncs and the server lacks.
  package static let adopt = "sync/adopt"
  /// `GET ?peer=ID`: how far the server's replica has merged a peer's feed.
  package static let position = "sync/position"
  /// `POST`: a message from the server's replica, filtered for subscriptions.
  package static let message = "sync/message"
  /// `POST`: a message for the server's replica to merge.
  package static let receive = "sync/receive"
}

/// A subscription on the wire: `{"entity":"Notebook","filter":{…}}`, the filter as queries send it.
package struct WireSyncSubscription: Codable, Sendable, Hashable {
  package var entity: String
  package var filter: WireFilter

  package init(_ subscription: SyncSubscription) {
    entity = subscription.entity
    filter = WireFilter(subscription.filter)
  }

  package var subscription: SyncSubscription { SyncSubscription(entity, where: filter.filter) }
}

/// A row state on the wire: its entity and the bytes a store keeps it in (base64 in JSON).
package struct WireSyncState: Codable, Sendable, Hashable {
  package var entity: String
  package var state: Data

  package init(_ state: SyncRowState) {
    entity = state.entity
    self.state = SyncEncoding.encode(state)
  }

  /// The state, or ``CofferError/Code/invalidInput`` for bytes that are not one.
  package func decoded() throws -> SyncRowState {
    do {
      return try SyncEncoding.decode(state, entity: entity, store: nil)
    } catch {
      throw CofferError(
        .invalidInput, "A row state of entity '\(entity)' in the sync message cannot be read.", entity: entity
      )
    }
  }
}

/// A ``SyncMessage`` on the wire; positions as sequence numbers.
package struct WireSyncMessage: Codable, Sendable {
  package var source: String
  package var from: UInt64?
  package var to: UInt64?
  package var states: [WireSyncState]
  package var outside: [WireSyncState]
  package var schemas: [String: String]
  package var isSnapshot: Bool
  package var purgedAt: UInt64?
  package var subscriptions: String?

  package init(_ message: SyncMessage) {
    source = message.source
    from = message.from?.sequence
    to = message.to?.sequence
    states = message.states.map(WireSyncState.init)
    outside = message.outside.map(WireSyncState.init)
    schemas = message.schemas
    isSnapshot = message.isSnapshot
    purgedAt = message.purgedAt?.sequence
    subscriptions = message.subscriptions
  }

  package func message() throws -> SyncMessage {
    var message = SyncMessage(
      source: source, from: from.map { ChangePosition(sequence: $0) },
      to: to.map { ChangePosition(sequence: $0) },
      states: try states.map { try $0.decoded() }, schemas: schemas, isSnapshot: isSnapshot,
      purgedAt: purgedAt.map { ChangePosition(sequence: $0) })
    message.outside = try outside.map { try $0.decoded() }
    message.subscriptions = subscriptions
    return message
  }
}

/// What a client asks the server's replica for: its message after a position, filtered for the
/// client's subscriptions.
package struct WireSyncMessageRequest: Codable, Sendable {
  package var after: UInt64?
  package var subscriptions: [WireSyncSubscription]?

  package init(after: UInt64?, subscriptions: [WireSyncSubscription]?) {
    self.after = after
    self.subscriptions = subscriptions
  }
}

/// The server's replica as a token sees it.
package struct WireSyncReplica: Codable, Sendable {
  /// The replica's id.
  package var replica: String
  /// The schemas of the app entities it syncs that the token may name.
  package var schemas: [EntitySchema]
  /// The only entities the token may sync, `nil` for every one.
  package var entities: [String]?
  /// Whether the token may send changes (the write scope).
  package var mayWrite: Bool

  package init(replica: String, schemas: [EntitySchema], entities: [String]?, mayWrite: Bool) {
    self.replica = replica
    self.schemas = schemas
    self.entities = entities
    self.mayWrite = mayWrite
  }
}

/// A ``SyncReceipt`` on the wire: `{"outcome":"merged","rows":3}`, `duplicate` or `gap`.
package struct WireSyncReceipt: Codable, Sendable {
  package var outcome: String
  package var rows: Int?

  package init(_ receipt: SyncReceipt) {
    switch receipt {
    case .merged(let count):
      outcome = "merged"
      rows = count
    case .duplicate: outcome = "duplicate"
    case .gap: outcome = "gap"
    }
  }

  package func receipt() throws -> SyncReceipt {
    switch outcome {
    case "merged": return .merged(rows ?? 0)
    case "duplicate": return .duplicate
    case "gap": return .gap
    default: throw CofferError(.decodingFailed, "The server answered a sync message with an unknown outcome.")
    }
  }
}

/// How far a replica has merged a peer's feed, `nil` before its first message.
package struct WireSyncPosition: Codable, Sendable {
  package var sequence: UInt64?

  package init(_ position: ChangePosition?) { sequence = position?.sequence }
}
