@_spi(Backend) import Coffer
import CofferMemory
import Foundation
import Testing

struct Note: Storable, Equatable {
  var id: Int64
  var title: String
  var rank: Int?
}

@Suite struct StoreSmokeTests {
  @Test func insertGetQueryAndDeleteThroughTheMemoryBackend() async throws {
    let store = Store(backend: MemoryBackend())
    try await store.insert([Note(id: 2, title: "b", rank: nil), Note(id: 1, title: "a", rank: 5)])
    #expect(try await store.get(Note.self, id: 1) == Note(id: 1, title: "a", rank: 5))
    let sorted = try await store.query(Note.self).sort([Sort("rank")]).fetch()
    #expect(sorted.map(\.id) == [2, 1])
    #expect(try await store.query(Note.self).filter(FieldRef("rank") == nil).count() == 1)
    await #expect(throws: CofferError.self) { try await store.insert(Note(id: 1, title: "dup", rank: nil)) }
    #expect(try await store.query(Note.self).delete() == 2)
    #expect(try await store.all(Note.self).isEmpty)
  }

  @Test func streamReadsEveryValueOnceAcrossPages() async throws {
    let store = Store(backend: MemoryBackend())
    try await store.insert((1...25).map { Note(id: Int64($0), title: "n\($0)", rank: $0 % 3) })
    var seen: [Int64] = []
    for try await note in store.query(Note.self).sort([Sort("rank", ascending: false)]).stream(pageSize: 4) {
      seen.append(note.id)
    }
    #expect(seen.count == 25)
    #expect(Set(seen).count == 25)
  }
}
