@_spi(Backend) import Coffer
import CofferMacros
import CofferMemory
import Foundation
import Testing

/// Four notes over two threads, two of them read: the data every spelling below selects from.
private func storeWithFourNotes() async throws -> Store {
  let store = Store(backend: MemoryBackend())
  var notes = [
    Note.sample(1, thread: 1, text: "Alpha one", minutes: 1),
    Note.sample(2, thread: 1, text: "beta two", minutes: 2),
    Note.sample(3, thread: 2, text: "Alpha three", minutes: 3),
    Note.sample(4, thread: 2, text: "gamma", minutes: 4),
  ]
  notes[1].readAt = notes[1].date
  notes[3].readAt = notes[3].date
  try await store.insert(notes)
  return store
}

/// The date of the note made `minutes` after the sample epoch.
private func at(_ minutes: Double) -> Date { Date(timeIntervalSince1970: 1_700_000_000 + minutes * 60) }

/// The ids a query selects, in its order.
private func ids(_ query: StoreQuery<Note>) async throws -> [Int64] { try await query.fetch().map(\.id) }

/// A run-time entity, for the field-name spelling on records.
private func tallyEntity() throws -> DynamicEntity {
  try DynamicEntity(
    name: "Tally",
    fields: [Field("id", .int), Field("label", .string), Field("nick", .string, isOptional: true)])
}

/// One spelling per audience: key paths on a typed model, field names on a run-time schema, and
/// `upsert` for insert-or-replace everywhere.
@Suite struct QueryVocabulary {
  @Test func aTypedModelFiltersAndSortsWithKeyPaths() async throws {
    let store = try await storeWithFourNotes()
    let notes = store.query(Note.self)
    #expect(try await ids(notes.filter(\.threadID == 1)) == [1, 2])
    #expect(try await ids(notes.filter(\.threadID != 1)) == [3, 4])
    #expect(try await ids(notes.filter(\.date < at(3))) == [1, 2])
    #expect(try await ids(notes.filter(\.date <= at(3))) == [1, 2, 3])
    #expect(try await ids(notes.filter(\.date > at(3))) == [4])
    #expect(try await ids(notes.filter(\.date >= at(3))) == [3, 4])
    #expect(try await ids(notes.filter(\.readAt == nil)) == [1, 3])
    #expect(try await ids(notes.filter(\.readAt != nil)) == [2, 4])
    #expect(try await ids(notes.filter(\.threadID == 1 && \.readAt == nil)) == [1])
    #expect(try await ids(notes.filter(\.threadID == 1 || \.readAt != nil)) == [1, 2, 4])
    #expect(try await ids(notes.filter(!(\.threadID == 1))) == [3, 4])
    #expect(try await ids(notes.filter(.isIn(\.id, [2, 4, 9]))) == [2, 4])
    #expect(try await ids(notes.filter(.contains(\.text, "ph"))) == [1, 3])
    #expect(try await ids(notes.filter(.hasPrefix(\.text, "Alpha"))) == [1, 3])
    #expect(try await ids(notes.filter(.hasSuffix(\.text, "two"))) == [2])
    #expect(try await ids(notes.sort(\.date, .descending)) == [4, 3, 2, 1])
    #expect(try await ids(notes.sort(\.threadID, .descending).sort(\.date)) == [3, 4, 1, 2])
  }

  @Test func aBatchDeletesWhatAKeyPathFilterSelects() async throws {
    let store = try await storeWithFourNotes()
    let summary = try await store.batch { batch in
      try batch.deleteAll(Note.self, where: \.threadID == 1 && \.readAt == nil)
      try batch.upsert(Note.sample(5, thread: 1, text: "new", minutes: 5))
    }
    #expect(summary.deleted == 1)
    #expect(try await ids(store.query(Note.self)) == [2, 3, 4, 5])
  }

  @Test func aTypedQueryCountsFindsStreamsObservesAndDeletes() async throws {
    let store = try await storeWithFourNotes()
    let unread = store.query(Note.self).filter(\.readAt == nil).sort(\.date, .descending)
    #expect(try await unread.count() == 2)
    #expect(try await unread.first()?.id == 3)
    var streamed: [Int64] = []
    for try await note in unread.stream(pageSize: 1) { streamed.append(note.id) }
    #expect(streamed == [3, 1])
    var results = unread.observe().makeAsyncIterator()
    #expect(try await results.next()?.map(\.id) == [3, 1])
    #expect(try await unread.delete() == 2)
    #expect(try await store.query(Note.self).count() == 2)
  }

  @Test func fieldNamesSelectWhatKeyPathsDo() async throws {
    let store = try await storeWithFourNotes()
    let notes = store.query(Note.self)
    // Stored names, not property names: `text` is stored as "body".
    let spelled: [(KeyPathFilter<Note>, Filter)] = [
      (\.threadID == 1 && \.readAt == nil, FieldRef("threadID") == 1 && FieldRef("readAt") == nil),
      (\.readAt != nil || \.date > at(3), FieldRef("readAt") != nil || FieldRef("date") > at(3)),
      (\.date <= at(2), FieldRef("date") <= at(2)),
      (.isIn(\.id, [1, 3]), FieldRef("id").isIn([1, 3])),
      (.contains(\.text, "ph"), FieldRef("body").contains("ph")),
      (
        .hasPrefix(\.text, "Alpha") && !(\.threadID == 2),
        FieldRef("body").hasPrefix("Alpha") && !(FieldRef("threadID") == 2)
      ),
      (.hasSuffix(\.text, "ma"), FieldRef("body").hasSuffix("ma")),
    ]
    for (keyPaths, fieldNames) in spelled {
      #expect(try await ids(notes.filter(keyPaths)) == ids(notes.filter(fieldNames)), "\(fieldNames)")
    }
    #expect(
      try await ids(notes.sort(\.threadID, .descending).sort(\.date))
        == ids(notes.sort([Sort("threadID", ascending: false), Sort("date")])))
  }

  @Test func recordsOfARunTimeSchemaFilterAndSortByFieldName() async throws {
    let store = Store(backend: MemoryBackend())
    let tallies = try tallyEntity()
    for (id, label, nick) in [(1, "b", "x"), (2, "a", nil), (3, "c", nil)] as [(Int64, String, String?)] {
      var record = try DynamicRecord(tallies, attributes: ["id": .int(id), "label": .string(label)])
      if let nick { try record.set("nick", nick) }
      try await store.insert(record)
    }
    let unnamed = try await store.records(
      tallies, where: FieldRef("nick") == nil, sort: [Sort("label", ascending: false)])
    #expect(unnamed.compactMap(\.id) == [.int(3), .int(2)])
    let rows = try await store.fetchRows(
      Query(entity: "Tally", filter: FieldRef("label") > "a", sort: [Sort("label")]))
    #expect(rows.map { $0.values[0] } == [.int(1), .int(3)])
  }

  @Test func upsertInsertsOrReplacesOnEveryPath() async throws {
    let store = Store(backend: MemoryBackend())
    try await store.upsert(Note.sample(1, text: "first"))
    try await store.upsert(Note.sample(1, text: "replaced"))
    try await store.batch { batch in try batch.upsert(Note.sample(2, text: "batched")) }
    let graph = ModelGraph(store: store)
    try await graph.upsert(Note.sample(3, text: "graph"))
    try await graph.batch { batch in batch.upsert(Note.sample(1, text: "graph batch")) }
    _ = try await graph.save()
    #expect(try await store.all(Note.self).map(\.text) == ["graph batch", "batched", "graph"])

    let tallies = try tallyEntity()
    var record = try DynamicRecord(tallies, attributes: ["id": .int(1), "label": .string("one")])
    try await store.upsert(record)
    try record.set("label", "uno")
    try await store.upsert(record)
    try record.set("label", "eins")
    try await graph.upsert(record)
    #expect(try await graph.record(tallies, id: 1)?["label"] == .string("eins"))
    _ = try await graph.save()
    #expect(try await store.record(tallies, id: 1)?["label"] == .string("eins"))
  }
}
