@_spi(Backend) import Coffer

/// A backend whose server runs a replica of the store it serves (`coffer serve`, reached through
/// `coffer+http://`): a ``SyncReplica`` made with ``SyncReplica/init(servedBy:)`` asks that replica
/// instead of reading and writing the served store's sync records itself, and the server lets the
/// token see and change only what it allows.
@_spi(Backend) public protocol SyncServing: Sendable {
  /// The server's replica as this client's token sees it.
  func syncReplica() async throws -> SyncServedReplica
  /// Prepares on the server an entity the client syncs and the server lacks.
  func syncAdopt(_ schema: EntitySchema) async throws
  /// How far the server's replica has merged `peer`'s feed.
  func syncPosition(of peer: String) async throws -> ChangePosition?
  /// The server replica's message after `position`, filtered for `subscriptions`.
  func syncMessage(after position: ChangePosition?, for subscriptions: [SyncSubscription]?) async throws
    -> SyncMessage
  /// Has the server's replica merge a message.
  func syncReceive(_ message: SyncMessage) async throws -> SyncReceipt
}

/// A server's replica as a token sees it.
@_spi(Backend) public struct SyncServedReplica: Sendable, Hashable {
  /// The replica's id.
  public var id: String
  /// The schemas of the app entities it syncs that the token may name, by name.
  public var schemas: [String: EntitySchema]
  /// The only entities the token may sync, `nil` for every one.
  public var entities: Set<String>?
  /// Whether the token may send changes.
  public var mayWrite: Bool

  /// A served replica.
  public init(id: String, schemas: [String: EntitySchema], entities: Set<String>?, mayWrite: Bool) {
    self.id = id
    self.schemas = schemas
    self.entities = entities
    self.mayWrite = mayWrite
  }
}

extension SyncReplica {
  /// A replica run by the server that serves `store` (a `coffer+http://` or `coffer+https://`
  /// store): sync reaches it through the server's sync routes, and the server's own replica stamps
  /// and merges. The server lets the store's token sync only what it allows: with a token limited
  /// to some entities, the replica on the other side must subscribe to those only (see
  /// ``SyncSubscription``), and only changes of them are sent; a token without the write scope can
  /// pull but not push.
  ///
  /// Its own methods that work on the store's records directly (``stamp()``, ``conflicts()``,
  /// ``purgeTombstones(olderThan:)``) work on the server's side of them as any client's would.
  ///
  /// - Throws: ``CofferError/Code/unsupported`` when the store's backend is not served that way.
  public init(servedBy store: Store) throws {
    guard let served = store.backend as? any SyncServing else {
      throw CofferError(
        .unsupported,
        "This store is not served by a Coffer server, so no server runs its replica. Use SyncReplica(store:) "
          + "for it, or open the server's coffer+http:// URL.", store: store.backend.name)
    }
    self.init(store: store, wall: nil, policies: [:], genesis: .stamped, subscriptions: nil, served: served)
  }

  /// The server's replica as this token sees it, asked once.
  func servedReplica(_ served: any SyncServing) async throws -> SyncServedReplica {
    if let known = servedInfo { return known }
    let info = try await served.syncReplica()
    servedInfo = info
    // What the server takes from this client: the entities its token may name.
    partial = info.entities.map { SyncSubscriptions($0.sorted().map { SyncSubscription($0) }) }
    return info
  }

  /// Whether this replica takes changes: `false` for one its server runs, reached with a token
  /// without the write scope.
  func takesChanges() async throws -> Bool {
    guard let served else { return true }
    return try await servedReplica(served).mayWrite
  }

  /// Refuses to send changes with a token that may not.
  func checkMayWrite(_ info: SyncServedReplica) throws {
    guard info.mayWrite else {
      throw CofferError(
        .accessDenied,
        "The server's token has no write scope, so this replica's changes cannot be sent to it. Sync with a token "
          + "that has the write scope, or make no local changes.", store: name)
    }
  }
}
