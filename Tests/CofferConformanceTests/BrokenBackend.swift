@_spi(Backend) import Coffer
@_spi(Backend) import CofferMemory
import CofferStores

/// A memory backend with one deliberate flaw, to prove that the suite's checks can fail.
final class BrokenBackend: StorageBackend, SnapshotReading, SchemaEditing, CommitObserving {
  enum Flaw: String, Sendable, CaseIterable {
    /// Ascending sorts put nulls last instead of first.
    case nullsLast = "broken-nulls-last"
    /// A failing batch keeps the operations applied before the failing one.
    case noRollback = "broken-no-rollback"
    /// A failing batch's error quotes the batch, stored values and all.
    case leakyErrors = "broken-leaky-errors"
  }

  let flaw: Flaw
  let name: String
  private let inner = MemoryBackend()
  private let schemas = LockedState<[String: EntitySchema]>([:])

  init(_ flaw: Flaw) {
    self.flaw = flaw
    self.name = flaw.rawValue + ":"
  }

  var capabilities: BackendCapabilities { inner.capabilities }

  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    let stored = try await inner.prepare(schemas)
    self.schemas.withLock { known in for schema in schemas { known[schema.name] = schema } }
    return stored
  }

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    guard flaw == .nullsLast, let key = query.sort.first, key.ascending,
      let position = schemas.withLock({ $0[query.entity] })?.position(of: key.field)
    else { return try await inner.read(query, visit) }
    var whole = query
    whole.limit = nil
    whole.offset = 0
    let rows = try await inner.fetch(whole)
    let reordered = rows.filter { !$0[position].isNull } + rows.filter { $0[position].isNull }
    let start = min(query.offset, reordered.count)
    let end = query.limit.map { start + min(reordered.count - start, $0) } ?? reordered.count
    try RowFields.handOver(Array(reordered[start..<end]), to: visit)
  }

  func count(_ query: Query) async throws -> Int { try await inner.count(query) }

  func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    if flaw == .leakyErrors {
      do {
        return try await inner.apply(changes)
      } catch var error as CofferError {
        error.message += " The batch was \(String(reflecting: changes.operations))."
        throw error
      }
    }
    guard flaw == .noRollback else { return try await inner.apply(changes) }
    var total = ChangeSummary()
    for operation in changes.operations {
      let summary = try await inner.apply(ChangeSet([operation]))
      total.inserted += summary.inserted
      total.updated += summary.updated
      total.deleted += summary.deleted
    }
    return total
  }

  func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws -> R {
    try await inner.withSnapshot(body)
  }

  func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R) async throws -> R {
    try await inner.editSchema(body)
  }

  func commitMarker() async throws -> UInt64? { try await inner.commitMarker() }

  func close() async throws { try await inner.close() }
}

extension BackendRegistry {
  /// The built-in backends, plus an unnamed (not reopenable) memory target and the broken ones.
  static func forConformanceTests() -> BackendRegistry {
    var registry = BackendRegistry.makeBuiltIn()
    registry.register(
      Entry(
        scheme: "memory-unnamed", forms: ["memory-unnamed:"], open: { _ in MemoryBackend() },
        scratchURL: { base, _, _ in base }))
    for flaw in BrokenBackend.Flaw.allCases {
      registry.register(
        Entry(
          scheme: flaw.rawValue, forms: [flaw.rawValue + ":"], open: { _ in BrokenBackend(flaw) },
          scratchURL: { base, _, _ in base }))
    }
    return registry
  }
}
