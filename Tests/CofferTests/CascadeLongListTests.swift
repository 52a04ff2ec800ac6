@_spi(Backend) import Coffer
import CofferMemory
import Testing

/// A memory backend that says it filters on long lists in one statement, and keeps the batches
/// it is given.
private final class LongListBackend: StorageBackend, LongListFiltering {
  private let inner = MemoryBackend()
  private let state = LockedState<[ChangeSet]>([])

  var name: String { inner.name }
  var capabilities: BackendCapabilities { inner.capabilities }
  var valuesPerFilter: Int { 10_000 }
  /// The batches applied so far.
  var batches: [ChangeSet] { state.withLock { $0 } }

  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] { try await inner.prepare(schemas) }

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try await inner.read(query, visit)
  }

  func count(_ query: Query) async throws -> Int { try await inner.count(query) }

  func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    state.withLock { $0.append(changes) }
    return try await inner.apply(changes)
  }

  func close() async throws { try await inner.close() }
}

@Suite struct CascadeLongListTests {
  /// On a backend that filters on long lists, deleting a notebook with 1,200 notes pins the notes
  /// by their ids alone and deletes their labellings with one delete by filter, one count
  /// pinning them.
  @Test func aCascadeTakesOneRuleOperationPerLevel() async throws {
    let backend = LongListBackend()
    let store = Store(backend: backend)
    try await store.prepare(schemas: [
      try EntitySchema(name: "Notebook", fields: [Field("id", .int)], idField: "id"),
      try EntitySchema(
        name: "Note", fields: [Field("id", .int), Field("notebookID", .int), Field("body", .string)],
        idField: "id",
        references: [EntityReference(field: "notebookID", entity: "Notebook", onDelete: .cascade)]),
      try EntitySchema(
        name: "Labelling", fields: [Field("id", .int), Field("noteID", .int)], idField: "id",
        references: [EntityReference(field: "noteID", entity: "Note", onDelete: .cascade)]),
    ])
    var setup = ChangeSet()
    setup.insert(Row([.int(1)]), into: "Notebook")
    setup.insert(Row([.int(2)]), into: "Notebook")
    for note in 1...1_200 { setup.insert(Row([.int(Int64(note)), .int(1), .string("")]), into: "Note") }
    setup.insert(Row([.int(5_000), .int(2), .string("")]), into: "Note")
    for labelling in 1...600 {
      setup.insert(Row([.int(Int64(labelling)), .int(Int64(labelling * 2))]), into: "Labelling")
    }
    setup.insert(Row([.int(9_000), .int(5_000)]), into: "Labelling")
    try await store.apply(setup)

    try await store.apply(ChangeSet([.delete(entity: "Notebook", id: .int(1))]))

    let batch = try #require(backend.batches.last)
    let labellingDeletes = batch.operations.filter {
      if case .deleteMatching(entity: "Labelling", _) = $0 { return true }
      return false
    }
    #expect(labellingDeletes.count == 1)
    #expect(batch.preconditions.count == 2, "the notes' ids and the labellings' number")
    let notes = try #require(batch.preconditions.first { $0.query.entity == "Note" })
    #expect(notes.query.layout?.fields.map(\.name) == ["id"])
    guard case .rows(let ids) = notes.expectation else {
      Issue.record("the notes are pinned by their ids")
      return
    }
    #expect(ids.count == 1_200)
    #expect(try await store.countRows(Query(entity: "Note")) == 1)
    #expect(try await store.countRows(Query(entity: "Labelling")) == 1)
  }
}
