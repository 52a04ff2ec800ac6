@_spi(Backend) import Coffer
@_spi(Backend) import CofferSync
import CofferWire
import Foundation
import Hummingbird
import Synchronization

/// The server side of sync: each store's own replica, reached through `…/v1/sync/…`, which lets
/// a token see and change only what it allows.
///
/// A token limited to some entities pulls only with subscriptions that name those entities alone
/// (so it receives nothing of others, not even withheld states), and pushes only states of those
/// entities; a token without the write scope pulls but cannot push or prepare.
extension ServerState {
  /// The store's sync replica, made once.
  func syncReplica(_ call: Call) -> SyncReplica {
    syncReplicas.withLock { replicas in
      let key = ObjectIdentifier(call.store)
      if let known = replicas[key] { return known }
      let replica = SyncReplica(store: call.store)
      replicas[key] = replica
      return replica
    }
  }

  /// `GET …/v1/sync/replica`.
  func syncReplicaInfo(_ call: Call) async throws -> Response {
    let replica = syncReplica(call)
    let id = try await replica.replicaID()
    let schemas = try await replica.syncedSchemas().values.filter { call.grant.allows(entity: $0.name) }
    return try json(
      WireSyncReplica(
        replica: id, schemas: schemas.sorted { $0.name < $1.name }, entities: call.grant.entities?.sorted(),
        mayWrite: call.grant.allows(.write)))
  }

  /// `POST …/v1/sync/adopt`: prepares an entity the client syncs and this store lacks.
  func syncAdopt(_ call: Call) async throws -> Response {
    let schema = try decode(EntitySchema.self, from: call.body)
    try call.check(entity: schema.name)
    try refuseInternal(schema.name, call)
    try await syncReplica(call).adopt(schema)
    return try json(WireDone())
  }

  /// `GET …/v1/sync/position?peer=ID`.
  func syncPosition(_ call: Call) async throws -> Response {
    guard let peer = call.request.uri.queryParameters["peer"], !peer.isEmpty, peer.utf8.count <= 200 else {
      throw CofferError(
        .invalidInput, "The peer parameter names a replica (its id, 1 to 200 bytes).", store: call.storeName)
    }
    return try json(WireSyncPosition(try await syncReplica(call).position(of: String(peer))))
  }

  /// `POST …/v1/sync/message`: the replica's message after a position, filtered for the client's
  /// subscriptions — which, for a token limited to some entities, must name those only.
  func syncMessage(_ call: Call) async throws -> Response {
    let request = try decode(WireSyncMessageRequest.self, from: call.body)
    let subscriptions = request.subscriptions?.map(\.subscription)
    for subscription in subscriptions ?? [] {
      try checkDepth(subscription.filter, in: call, entity: subscription.entity)
      try refuseInternal(subscription.entity, call)
      try call.check(entity: subscription.entity)
    }
    if let allowed = call.grant.entities, subscriptions == nil {
      throw Forbidden(
        error: CofferError(
          .accessDenied,
          "This token may sync only \(allowed.count) of the store's entities, so a replica syncing with it must "
            + "subscribe to those only (SyncSubscription, coffer sync --subscribe ENTITY).",
          store: call.storeName))
    }
    let after = request.after.map { ChangePosition(sequence: $0) }
    let message = try await syncReplica(call).message(after: after, for: subscriptions)
    return try json(WireSyncMessage(message))
  }

  /// `POST …/v1/sync/receive`: merges a client's message. Every entity it names must be one the
  /// token may use; from a token limited to some entities it must be filtered for exactly those.
  func syncReceive(_ call: Call) async throws -> Response {
    var message = try decode(WireSyncMessage.self, from: call.body).message()
    let named = Set(message.states.map(\.entity) + message.outside.map(\.entity) + message.schemas.keys)
    for entity in named.sorted() {
      try refuseInternal(entity, call)
      guard call.grant.allows(entity: entity) else {
        throw Forbidden(
          error: CofferError(
            .accessDenied,
            "This token may not change entity '\(entity)', so changes of it cannot be synced through it. Sync them "
              + "with a token whose entities list it.", store: call.storeName, entity: entity))
      }
    }
    if let allowed = call.grant.entities {
      // The client filtered its message for what this token takes: every state of those entities.
      let expected = SyncSubscriptions.fingerprint(allowed.sorted().map { SyncSubscription($0) })
      guard message.subscriptions == expected else {
        throw CofferError(
          .invalidInput,
          "A sync message through a token limited to some entities must hold every change of those entities; "
            + "this one was filtered otherwise. Sync with SyncReplica(servedBy:).", store: call.storeName)
      }
      message.subscriptions = nil
      message.outside = []
    }
    return try json(WireSyncReceipt(try await syncReplica(call).receive(message)))
  }

  /// Refuses the server's and sync's own entities.
  private func refuseInternal(_ entity: String, _ call: Call) throws {
    guard entity.hasPrefix("coffer.") else { return }
    throw CofferError(
      .unknownEntity, "Entity '\(entity)' is kept by Coffer itself and is never synced as app data.",
      store: call.storeName, entity: entity)
  }
}
