@_spi(Backend) import Coffer
@_spi(Backend) import CofferSync
import CofferWire
import Foundation
import NIOHTTP1

/// Sync run by the server: a replica made with `SyncReplica(servedBy:)` over this backend asks
/// the server's own replica through the sync routes, which let the token see and change only what
/// it allows.
@_spi(Backend) extension RemoteBackend: SyncServing {
  /// The server's replica as this token sees it.
  public func syncReplica() async throws -> SyncServedReplica {
    let wire = try await get("/v1/" + SyncWirePath.replica, as: WireSyncReplica.self)
    var schemas: [String: EntitySchema] = [:]
    for schema in wire.schemas { schemas[schema.name] = schema }
    return SyncServedReplica(
      id: wire.replica, schemas: schemas, entities: wire.entities.map(Set.init), mayWrite: wire.mayWrite)
  }

  /// Prepares an entity on the server.
  public func syncAdopt(_ schema: EntitySchema) async throws {
    _ = try await call(.POST, "/v1/" + SyncWirePath.adopt, schema, as: WireDone.self)
  }

  /// How far the server's replica has merged a peer's feed.
  public func syncPosition(of peer: String) async throws -> ChangePosition? {
    let query = peer.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
    let wire = try await get("/v1/" + SyncWirePath.position + "?peer=" + query, as: WireSyncPosition.self)
    return wire.sequence.map { ChangePosition(sequence: $0) }
  }

  /// The server replica's message after a position, filtered for subscriptions.
  public func syncMessage(after position: ChangePosition?, for subscriptions: [SyncSubscription]?)
    async throws
    -> SyncMessage
  {
    let request = WireSyncMessageRequest(
      after: position?.sequence, subscriptions: subscriptions.map { $0.map(WireSyncSubscription.init) })
    let wire = try await call(.POST, "/v1/" + SyncWirePath.message, request, as: WireSyncMessage.self)
    do {
      return try wire.message()
    } catch let error as CofferError {
      throw error.inStore(name)
    }
  }

  /// Has the server's replica merge a message (merging twice changes nothing, so a lost answer is
  /// simply sent again).
  public func syncReceive(_ message: SyncMessage) async throws -> SyncReceipt {
    let wire = try await call(
      .POST, "/v1/" + SyncWirePath.receive, WireSyncMessage(message), as: WireSyncReceipt.self)
    return try wire.receipt()
  }
}
