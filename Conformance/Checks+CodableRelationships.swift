@_spi(Backend) import Coffer
import Foundation

/// A note of a ``RefThread``, `Storable` through `Codable` alone: no key paths name its fields.
private struct CodableNote: Codable, Storable, Equatable {
  var id: Int64
  var threadID: Int64
  var text: String
  static var references: [EntityReference] { [.to(RefThread.self, by: "threadID", onDelete: .cascade)] }
}

/// A label, `Storable` through `Codable` alone.
private struct CodableLabel: Codable, Storable, Equatable {
  var id: String
}

/// The join of notes and labels, `Storable` through `Codable` alone.
private struct CodableLabeling: Codable, Storable, Equatable {
  var id: String
  var noteID: Int64
  var labelID: String
  static var references: [EntityReference] {
    [
      .to(CodableNote.self, by: "noteID", onDelete: .cascade),
      .to(CodableLabel.self, by: "labelID", onDelete: .cascade),
    ]
  }
  init(_ noteID: Int64, _ labelID: String) {
    self.id = "\(noteID)/\(labelID)"
    self.noteID = noteID
    self.labelID = labelID
  }
}

extension ConformanceSuite {
  static let codableRelationshipChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "relationships.codable-models", requires: .preconditions,
      "Eager loading and many-to-many links work for models that are Storable through Codable alone, with "
        + "their references named by stored field: including(_:by:), link, linked and unlink."
    ) { context in
      let store = try await context.store()
      try await store.prepare([RefThread.self])
      try await store.prepare([CodableNote.self, CodableLabel.self, CodableLabeling.self])
      try await store.insert([RefThread(id: 1, title: "one"), RefThread(id: 2, title: "two")])
      try await store.insert([
        CodableNote(id: 10, threadID: 1, text: "c"), CodableNote(id: 11, threadID: 1, text: "a"),
        CodableNote(id: 12, threadID: 1, text: "b"), CodableNote(id: 20, threadID: 2, text: "z"),
      ])
      let threads = try await store.query(RefThread.self).sort(\.id)
        .including(CodableNote.self, by: "threadID", sort: [Sort("text")], limit: 2).fetch()
      try expectEqual(threads.map(\.parent.id), [1, 2], "parents")
      try expectEqual(
        threads.map { $0.children.map(\.id) }, [[11, 12], [20]], "each thread's first notes by text")
      try await expectThrows(.invalidQuery, "including by a field the child lacks") {
        try await store.query(RefThread.self).including(CodableNote.self, by: "nope").fetch()
      }

      try await store.insert([CodableLabel(id: "red"), CodableLabel(id: "blue")])
      try expect(
        try await store.link(CodableLabeling(10, "red"), "noteID", "labelID"), "the first link is stored")
      try expect(
        !(try await store.link(CodableLabeling(10, "red"), "noteID", "labelID")), "a second link is not")
      try await store.link(CodableLabeling(10, "blue"), "noteID", "labelID")
      try await store.link(CodableLabeling(11, "red"), "noteID", "labelID")
      let labels = try await store.linked(
        CodableLabel.self, from: Int64(10), through: CodableLabeling.self, "noteID", to: "labelID")
      try expectEqual(labels.map(\.id), ["blue", "red"], "labels of note 10, by id")
      try expectEqual(
        try await store.unlink(CodableLabeling.self, "noteID", Int64(10), "labelID", "red"), 1,
        "links removed")
      try expectEqual(
        try await store.linked(
          CodableLabel.self, from: Int64(10), through: CodableLabeling.self, "noteID", to: "labelID"
        ).map(\.id), ["blue"], "labels of note 10 after unlinking red")
      try await store.delete(RefThread.self, id: 1)
      try expectEqual(
        try await store.query(CodableLabeling.self).count(), 0,
        "links left after their notes' thread was deleted")
    }
  ]
}
