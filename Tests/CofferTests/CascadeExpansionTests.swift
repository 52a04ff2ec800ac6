@_spi(Backend) import Coffer
@_spi(Backend) import CofferMemory
import Testing

/// A memory backend that counts the reads the core makes of it and keeps the batches it is
/// given, so a test can see how the core expanded a batch.
private final class CountingBackend: StorageBackend, SnapshotReading, SchemaEditing {
  private let inner = MemoryBackend()
  private let state = LockedState<(reads: Int, batches: [ChangeSet])>((0, []))

  var name: String { inner.name }
  var capabilities: BackendCapabilities { inner.capabilities }
  /// The reads (`read` and `count` calls) made so far.
  var reads: Int { state.withLock { $0.reads } }
  /// The batches applied so far.
  var batches: [ChangeSet] { state.withLock { $0.batches } }

  func resetCounts() { state.withLock { $0 = (0, []) } }

  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] { try await inner.prepare(schemas) }

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    state.withLock { $0.reads += 1 }
    try await inner.read(query, visit)
  }

  func count(_ query: Query) async throws -> Int {
    state.withLock { $0.reads += 1 }
    return try await inner.count(query)
  }

  func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    state.withLock { $0.batches.append(changes) }
    return try await inner.apply(changes)
  }

  func withSnapshot<R>(_ body: (any StorageSnapshot) async throws -> R) async throws -> R {
    try await inner.withSnapshot(body)
  }

  func editSchema<R: Sendable>(_ body: @Sendable (any SchemaEditor) throws -> R) async throws -> R {
    try await inner.editSchema(body)
  }

  func close() async throws { try await inner.close() }
}

/// The issue-41 shape: a notebook, notes that cascade from it, labellings that cascade from notes
/// and from labels.
private func notebookSchemas() throws -> [EntitySchema] {
  [
    try EntitySchema(name: "Notebook", fields: [Field("id", .int), Field("title", .string)], idField: "id"),
    try EntitySchema(name: "Label", fields: [Field("id", .int), Field("name", .string)], idField: "id"),
    try EntitySchema(
      name: "Note", fields: [Field("id", .int), Field("notebookID", .int), Field("text", .string)],
      idField: "id",
      indexes: [.on("notebookID")],
      references: [EntityReference(field: "notebookID", entity: "Notebook", onDelete: .cascade)]),
    try EntitySchema(
      name: "Labelling", fields: [Field("id", .int), Field("noteID", .int), Field("labelID", .int)],
      idField: "id", indexes: [.on("noteID"), .on("labelID")],
      references: [
        EntityReference(field: "noteID", entity: "Note", onDelete: .cascade),
        EntityReference(field: "labelID", entity: "Label", onDelete: .cascade),
      ]),
  ]
}

@Suite struct CascadeExpansionTests {
  /// Deleting a notebook with 1,200 notes deletes them and their labellings, across the chunks
  /// the core reads them in, and nothing of the other notebook.
  @Test func aCascadeAcrossChunksDeletesExactlyTheReferringRows() async throws {
    let backend = CountingBackend()
    let store = Store(backend: backend)
    try await store.prepare(schemas: try notebookSchemas())
    var setup = ChangeSet()
    setup.insert(Row([.int(1), .string("big")]), into: "Notebook")
    setup.insert(Row([.int(2), .string("small")]), into: "Notebook")
    setup.insert(Row([.int(1), .string("label")]), into: "Label")
    for note in 1...1_200 { setup.insert(Row([.int(Int64(note)), .int(1), .string("")]), into: "Note") }
    setup.insert(Row([.int(5_000), .int(2), .string("")]), into: "Note")
    for labelling in 1...600 {
      setup.insert(Row([.int(Int64(labelling)), .int(Int64(labelling * 2)), .int(1)]), into: "Labelling")
    }
    setup.insert(Row([.int(9_000), .int(5_000), .int(1)]), into: "Labelling")
    try await store.apply(setup)
    backend.resetCounts()

    let summary = try await store.apply(ChangeSet([.delete(entity: "Notebook", id: .int(1))]))

    #expect(summary.deleted == 1)
    #expect(try await store.countRows(Query(entity: "Note")) == 1)
    #expect(try await store.countRows(Query(entity: "Labelling")) == 1)
    try await store.apply(ChangeSet([.delete(entity: "Notebook", id: .int(2))]))
    #expect(try await store.countRows(Query(entity: "Labelling")) == 0)
  }

  /// What the core sends for that delete: the notes by id, their labellings by filter in three
  /// chunks of at most 500 notes, and a precondition per read — a handful of reads in all.
  @Test func theExpandedBatchHasOneRuleOperationPerChunk() async throws {
    let backend = CountingBackend()
    let store = Store(backend: backend)
    try await store.prepare(schemas: try notebookSchemas())
    var setup = ChangeSet()
    setup.insert(Row([.int(1), .string("big")]), into: "Notebook")
    setup.insert(Row([.int(1), .string("label")]), into: "Label")
    for note in 1...1_200 { setup.insert(Row([.int(Int64(note)), .int(1), .string("")]), into: "Note") }
    for labelling in 1...600 {
      setup.insert(Row([.int(Int64(labelling)), .int(Int64(labelling * 2)), .int(1)]), into: "Labelling")
    }
    try await store.apply(setup)
    backend.resetCounts()

    try await store.apply(ChangeSet([.delete(entity: "Notebook", id: .int(1))]))

    let batch = try #require(backend.batches.last)
    let labellingDeletes = batch.operations.filter {
      if case .deleteMatching(entity: "Labelling", _) = $0 { return true }
      return false
    }
    let noteDeletes = batch.operations.filter {
      if case .delete(entity: "Note", _) = $0 { return true }
      return false
    }
    #expect(noteDeletes.count == 1_200)
    #expect(labellingDeletes.count == 3, "one delete by filter per 500 notes")
    // The notes (one read), their labellings (a count per chunk): nothing per note.
    #expect(backend.reads <= 6, "reads: \(backend.reads)")
    #expect(batch.preconditions.count <= 6, "preconditions: \(batch.preconditions.count)")
    #expect(try await store.countRows(Query(entity: "Labelling")) == 0)
  }
}
