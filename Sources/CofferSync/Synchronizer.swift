@_spi(Backend) import Coffer
import Synchronization

/// Keeps two replicas in step: pushes the local replica's changes to the remote one and pulls
/// the remote one's back, over their change feeds, in messages of ``SyncReplica/messageLimit``
/// row states, each merged once (see <doc:Sync>).
///
/// A replica that has merged nothing yet from one whose rows carry the implicit genesis stamp
/// (``SyncReplica/Genesis/implicit``) first takes a bootstrap from it: its rows in pages of
/// ``bootstrapPageSize``, read in one snapshot, then its feed from there.
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
  /// Most rows per page of a bootstrap (see <doc:Sync>, "Bootstrap"): per read of the sender
  /// and per batch of the receiver, as many as `StoreCopier` writes in one batch (each batch is
  /// one durable commit).
  public var bootstrapPageSize = 50_000

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

    /// Counts messages and changed rows in the direction `pushing` says.
    mutating func add(pushing: Bool, messages: Int, rows: Int) {
      if pushing {
        pushedMessages += messages
        pushedRows += rows
      } else {
        pulledMessages += messages
        pulledRows += rows
      }
    }
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
  /// entities only the other has), then pushes, then pulls, until neither feed holds more; a side
  /// that has merged nothing from a replica with a genesis stamp takes a bootstrap first (each
  /// page counts as a message).
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
    let subscriptions = await target.subscriptions
    // A partial replica takes no bootstrap: its first message is a snapshot, filtered for it.
    // Nor does a replica its server runs: the server merges a snapshot.
    if cursor == nil, subscriptions == nil, target.served == nil, source.served == nil,
      let stamp = try await source.genesisStamp()
    {
      // The source's rows with the genesis stamp are in no feed: the target takes them in bulk,
      // unless it has them all already (it took them from the source, or both from a third).
      let rows = try await target.genesisHeld() != stamp
      let (pages, count) = try await bootstrap(
        from: source, to: target, rows: rows, pushing: pushing, report: report, progress: progress)
      report.add(pushing: pushing, messages: pages, rows: count)
      cursor = try await target.position(of: id)
    }
    while true {
      let message = try await source.message(after: cursor, for: subscriptions)
      if message.isEmpty { return }
      // Nothing to send to a side that takes no changes (a server, through a token without the
      // write scope): no need to ask it.
      if message.states.isEmpty, message.outside.isEmpty, try await !target.takesChanges() { return }
      switch try await target.receive(message) {
      case .merged(let count):
        report.add(pushing: pushing, messages: 1, rows: count)
      case .duplicate, .gap:
        break
      }
      cursor = try await target.position(of: id)
      progress?(Progress(pushing: pushing, states: message.states.count, report: report))
    }
  }

  /// Runs a bootstrap from `source` into `target` in pages of ``bootstrapPageSize`` rows; how
  /// many pages changed the target, and how many rows or states they changed.
  private func bootstrap(
    from source: SyncReplica, to target: SyncReplica, rows: Bool, pushing: Bool, report: Report,
    progress: (@Sendable (Progress) -> Void)?
  ) async throws -> (pages: Int, rows: Int) {
    let tally = BootstrapTally()
    try await source.bootstrap(pageSize: bootstrapPageSize, includingRows: rows) { page in
      let count = try await target.receive(bootstrap: page)
      let (pages, rows) = tally.add(count)
      guard let progress else { return }
      var now = report
      now.add(pushing: pushing, messages: pages, rows: rows)
      progress(Progress(pushing: pushing, states: page.rows.count + page.states.count, report: now))
    }
    return tally.totals
  }

  /// Prepares on each side the entities only the other has (on a server, only those the token may
  /// name); refuses an entity whose fields differ.
  public func matchSchemas() async throws {
    let mine = try await local.syncedSchemas()
    let theirs = try await remote.syncedSchemas()
    // A server takes from this client only the entities its token may name.
    let taken = remote.served == nil ? nil : await remote.subscriptions.map { Set($0.map(\.entity)) }
    for (name, schema) in mine.sorted(by: { $0.key < $1.key }) where taken?.contains(name) ?? true {
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

/// Counts a bootstrap's pages that changed the target, and what they changed.
private final class BootstrapTally: Sendable {
  private let counts = Mutex((pages: 0, rows: 0))

  /// Adds a page that changed `rows` rows or states; the totals so far.
  func add(_ rows: Int) -> (pages: Int, rows: Int) {
    counts.withLock { counts in
      if rows > 0 {
        counts.pages += 1
        counts.rows += rows
      }
      return counts
    }
  }

  var totals: (pages: Int, rows: Int) { counts.withLock { $0 } }
}
