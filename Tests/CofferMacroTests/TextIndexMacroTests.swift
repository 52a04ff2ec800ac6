@_spi(Backend) import Coffer
import CofferMacros
import CofferMemory
import Testing

/// A model whose body has a text index, declared with the macro.
@Storable
struct SearchableNote {
  var id: Int64
  @Indexed(.text) var body: String
  @Indexed var folder: Int64
}

@Suite struct TextIndexMacro {
  @Test func indexedTextDeclaresATextIndexBesideOrdinaryOnes() throws {
    #expect(SearchableNote.indexes == [.text(on: "body"), .on("folder")])
    #expect(try EntitySchema(for: SearchableNote.self).indexes.first?.isText == true)
  }

  @Test func aMacroTypeWithATextIndexIsSearchedThroughIt() async throws {
    let store = Store(backend: MemoryBackend())
    try await store.insert([
      SearchableNote(id: 1, body: "Swift concurrency", folder: 1),
      SearchableNote(id: 2, body: "swift swift", folder: 1),
      SearchableNote(id: 3, body: "rust", folder: 2),
    ])
    let found = try await store.query(SearchableNote.self).filter(.matches(\.body, "swif*"))
      .sort(\.body, .relevance).fetch()
    #expect(found.map(\.id) == [2, 1])
  }
}
