import CofferMacros
import CofferStores
import Foundation
import Testing

/// The code example in README.md, kept here so that it keeps compiling and doing what the
/// README says.
@Suite struct ReadmeExampleTests {
  @Storable
  struct Note {
    var id: UUID
    var title: String
    @Indexed var pinned: Bool
    var updatedAt: Date
  }

  @Test func theReadmeExampleRuns() async throws {
    // README example begins.
    let store = try await Store.open(url: "memory:")
    try await store.insert(Note(id: UUID(), title: "Buy milk", pinned: true, updatedAt: .now))

    let pinned = try await store.query(Note.self)
      .filter(\.pinned == true && .contains(\.title, "milk"))
      .sort(\.updatedAt, .descending)
      .limit(20)
      .fetch()

    // All of it or none of it.
    try await store.batch { batch in
      for note in pinned {
        try batch.update(note.updating(\.pinned, to: false))
      }
      try batch.insert(Note(id: UUID(), title: "Call Ana", pinned: false, updatedAt: .now))
    }

    // Read, decide, write: if another writer changes what the body read before it commits,
    // nothing is applied and the body runs again on fresh values.
    try await store.transaction { tx in
      for note in try await tx.query(Note.self).filter(\.pinned == false).fetch() {
        try tx.update(note.updating(\.title, to: note.title + " (done)"))
      }
    }
    // README example ends.
    #expect(pinned.map(\.title) == ["Buy milk"])
    #expect(try await store.query(Note.self).filter(\.pinned == false).count() == 2)
    #expect(try await store.all(Note.self).map(\.title).sorted() == ["Buy milk (done)", "Call Ana (done)"])
  }
}
