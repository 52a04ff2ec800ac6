import Coffer
import CofferStores
import Foundation
import Testing

/// The code example in README.md, kept here so that it keeps compiling and doing what the
/// README says.
@Suite struct ReadmeExampleTests {
  struct Note: Storable {
    var id: UUID
    var title: String
    var pinned: Bool
    var updatedAt: Date

    static var indexes: [Index] { [.on("pinned", "updatedAt")] }
  }

  @Test func theReadmeExampleRuns() async throws {
    // README example begins.
    let store = try await Store.open(url: "memory:")
    try await store.insert(Note(id: UUID(), title: "Buy milk", pinned: true, updatedAt: .now))

    let pinned = try await store.query(Note.self)
      .filter(FieldRef("pinned") == true && FieldRef("title").contains("milk"))
      .sort(FieldRef("updatedAt").descending)
      .limit(20)
      .fetch()

    // All of it or none of it.
    try await store.batch { batch in
      for var note in pinned {
        note.pinned = false
        try batch.update(note)
      }
      try batch.insert(Note(id: UUID(), title: "Call Ana", pinned: false, updatedAt: .now))
    }
    // README example ends.
    #expect(pinned.map(\.title) == ["Buy milk"])
    #expect(try await store.count(Note.self, where: FieldRef("pinned") == false) == 2)
  }
}
