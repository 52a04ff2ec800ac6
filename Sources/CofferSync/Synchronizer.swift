@_spi(Backend) import Coffer

/// Keeps two replicas in step: pushes the local replica's changes to the remote one and pulls
/// the remote one's back, over their change feeds, in messages of ``SyncReplica/messageLimit``
/// row states, each merged once (see <doc:Sync>).
///
/// ```swift
/// let sync = Synchronizer(local: SyncReplica(store: device), remote: SyncReplica(store: server))
/// let report = try await sync.sync()
/// ```
public struct Synchronizer: Sendable {
  /// The replica on this side.
  public let local: SyncReplica
  /// The replica it syncs with.
  public let remote: SyncReplica

  /// A synchronizer between two replicas.
  public init(local: SyncReplica, remote: SyncReplica) {
    self.local = local
    self.remote = remote
  }

  /// What one round of sync did.
  public struct Report: Sendable, Hashable {
    /// Messages sent from the local replica to the remote one.
    public var pushedMessages = 0
    /// Row states the remote replica changed on.
    public var pushedRows = 0
    /// Messages sent from the remote replica to the local one.
    public var pulledMessages = 0
    /// Row states the local replica changed on.
    public var pulledRows = 0
  }

  /// Progress of a round, after each message.
  public struct Progress: Sendable, Hashable {
    /// Whether the message went from the local replica to the remote one.
    public var pushing: Bool
    /// Row states in the message.
    public var states: Int
    /// What the round did so far.
    public var report: Report
  }

  /// One round: checks that both replicas have the same schemas (preparing on each side the
  /// entities only the other has), then pushes, then pulls, until neither feed holds more.
  ///
  /// - Throws: ``CofferError/Code/schemaMismatch`` when an entity has other fields on each side.
  @discardableResult
  public func sync(progress: (@Sendable (Progress) -> Void)? = nil) async throws -> Report {
    try await matchSchemas()
    var report = Report()
    let localID = try await local.replicaID()
    let remoteID = try await remote.replicaID()
    try await transfer(
      from: local, id: localID, to: remote, pushing: true, report: &report, progress: progress)
    try await transfer(
      from: remote, id: remoteID, to: local, pushing: false, report: &report, progress: progress)
    return report
  }

  private func transfer(
    from source: SyncReplica, id: String, to target: SyncReplica, pushing: Bool, report: inout Report,
    progress: (@Sendable (Progress) -> Void)?
  ) async throws {
    var cursor = try await target.position(of: id)
    while true {
      let message = try await source.message(after: cursor)
      if message.isEmpty { return }
      switch try await target.receive(message) {
      case .merged(let count):
        if pushing {
          report.pushedMessages += 1
          report.pushedRows += count
        } else {
          report.pulledMessages += 1
          report.pulledRows += count
        }
      case .duplicate, .gap:
        break
      }
      cursor = try await target.position(of: id)
      progress?(Progress(pushing: pushing, states: message.states.count, report: report))
    }
  }

  /// Prepares on each side the entities only the other has; refuses an entity whose fields
  /// differ.
  public func matchSchemas() async throws {
    let mine = try await local.syncedSchemas()
    let theirs = try await remote.syncedSchemas()
    for (name, schema) in mine.sorted(by: { $0.key < $1.key }) {
      if let other = theirs[name] {
        if SyncRecords.fingerprint(schema) != SyncRecords.fingerprint(other) {
          throw SyncReplica.schemaDiffers(entity: name, store: remote.store.backend.name)
        }
      } else {
        try await remote.adopt(schema)
      }
    }
    for (name, schema) in theirs.sorted(by: { $0.key < $1.key }) where mine[name] == nil {
      try await local.adopt(schema)
    }
  }

  /// Syncs, then again whenever either replica's feed records a batch, until the task is
  /// cancelled.
  public func follow(
    progress: (@Sendable (Progress) -> Void)? = nil, rounds: (@Sendable (Report) -> Void)? = nil
  )
    async throws
  {
    while !Task.isCancelled {
      let report = try await sync(progress: progress)
      rounds?(report)
      let localAt = try await local.store.lastChangePosition()
      let remoteAt = try await remote.store.lastChangePosition()
      try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { for try await _ in local.store.changes(after: localAt, follow: true) { return } }
        group.addTask { for try await _ in remote.store.changes(after: remoteAt, follow: true) { return } }
        _ = try await group.next()
        group.cancelAll()
      }
    }
  }
}
