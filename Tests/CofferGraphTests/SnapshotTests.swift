import Coffer
import Foundation
import Testing

@Suite struct SnapshotTests {
  @Test(arguments: graphStoreURLs) func aSnapshotLoadsBackExactly(url: String) async throws {
    try await withStore(url) { store, directory in
      let born = Date(timeIntervalSince1970: 1_700_000_000.123456)
      let graph = ModelGraph(store: store)
      var ana = Author(id: "1", name: "Ana", email: "ana@example.com")
      ana.born = born
      try await graph.insert(ana)
      try await graph.insert(Author(id: "2", name: "Ben"))
      try await graph.save()
      try await graph.update(Author.self, id: "2") { $0.name = "Ben (unsaved)" }
      try await graph.delete(Author.self, id: "1")
      let file = directory.file("graph.plist")
      try graph.write(to: file)

      let restored = ModelGraph(store: store)
      try restored.load(from: file)
      #expect(restored.count == 1)
      #expect(try await restored.get(Author.self, id: "2")?.name == "Ben (unsaved)")
      #expect(try await restored.get(Author.self, id: "1") == nil)
      #expect(restored.hasChanges)
      try await restored.save()
      #expect(try await store.all(Author.self) == [Author(id: "2", name: "Ben (unsaved)")])
    }
  }

  @Test(arguments: graphStoreURLs) func aSnapshotKeepsDatesToTheMicrosecond(url: String) async throws {
    try await withStore(url) { store, directory in
      let graph = ModelGraph(store: store)
      var author = Author(id: "1", name: "Ana")
      author.born = Date(timeIntervalSince1970: 1_700_000_000.123456)
      try await graph.insert(author)
      let file = directory.file("graph.plist")
      try graph.write(to: file)
      let restored = ModelGraph(store: store)
      try restored.load(from: file)
      #expect(try await restored.get(Author.self, id: "1") == (try await graph.get(Author.self, id: "1")))
    }
  }

  @Test(arguments: graphStoreURLs) func loadingAFileThatIsNotASnapshotFailsAndChangesNothing(url: String)
    async throws
  {
    try await withStore(url) { store, directory in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      let file = directory.file("not-a-snapshot.plist")
      try Data("hello".utf8).write(to: file)
      expectSyncError(.corruptStore) { try graph.load(from: file) }
      #expect(graph.count == 1)
    }
  }

  @Test(arguments: graphStoreURLs) func loadingAMissingFileFailsWithItsPath(url: String) async throws {
    try await withStore(url) { store, directory in
      let graph = ModelGraph(store: store)
      let file = directory.file("missing.plist")
      let error = #expect(throws: CofferError.self) { try graph.load(from: file) }
      #expect(error?.code == .io)
      #expect(error?.path == file.path)
    }
  }
}
