@_spi(Backend) import Coffer

/// A backend that hands every call to another one, keeping the change feed it records, and
/// counts the reads of each entity: how a check sees how often a store ran a query, which the
/// public API does not show.
final class ReadCountingBackend: ChangeRecording {
  let inner: any ChangeRecording
  private let reads = LockedState<[String: Int]>([:])

  init(_ inner: any ChangeRecording) { self.inner = inner }

  /// How many reads of an entity went through.
  func readCount(of entity: String) -> Int { reads.withLock { $0[entity, default: 0] } }

  var name: String { inner.name }
  var capabilities: BackendCapabilities { inner.capabilities }

  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] { try await inner.prepare(schemas) }

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    reads.withLock { $0[query.entity, default: 0] += 1 }
    try await inner.read(query, visit)
  }

  func count(_ query: Query) async throws -> Int { try await inner.count(query) }
  func apply(_ changes: ChangeSet) async throws -> ChangeSummary { try await inner.apply(changes) }
  /// Closing is left to the store the check made over the inner backend.
  func close() async throws {}

  func startRecordingChanges(retention: ChangeRetention) async throws {
    try await inner.startRecordingChanges(retention: retention)
  }
  func changeFeedBounds() async throws -> ChangeFeedBounds? { try await inner.changeFeedBounds() }
  func readChanges(after sequence: UInt64, limit: Int) async throws -> [RecordedChanges] {
    try await inner.readChanges(after: sequence, limit: limit)
  }
  func trimChanges(_ trim: ChangeTrim) async throws { try await inner.trimChanges(trim) }
  func waitForChanges(after sequence: UInt64, timeout: Duration) async throws {
    try await inner.waitForChanges(after: sequence, timeout: timeout)
  }
}
