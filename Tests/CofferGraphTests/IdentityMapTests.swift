import Coffer
import Foundation
import Testing

@Suite struct IdentityMapTests {
  @Test(arguments: graphStoreURLs) func instanceCreatesAValueWithTheTypesDefaults(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let author = try await graph.instance(of: Author.self, id: "0001")
      #expect(author == Author(id: "0001"))
      #expect(graph.contains(Author.self, id: "0001"))
      #expect(try await store.get(Author.self, id: "0001") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func instanceReturnsTheStoredValueWhenThereIsOne(url: String) async throws
  {
    try await withStore(url) { store, _ in
      try await store.insert(Author(id: "7", name: "Ana"))
      let graph = ModelGraph(store: store)
      #expect(try await graph.instance(of: Author.self, id: "7").name == "Ana")
    }
  }

  @Test(arguments: graphStoreURLs) func aSecondReadReturnsTheGraphsValueNotTheStores(url: String) async throws
  {
    try await withStore(url) { store, _ in
      try await store.insert(Author(id: "7", name: "Ana"))
      let graph = ModelGraph(store: store)
      _ = try await graph.get(Author.self, id: "7")
      try await store.update(Author(id: "7", name: "Changed behind the graph"))
      #expect(try await graph.get(Author.self, id: "7")?.name == "Ana")
    }
  }

  @Test(arguments: graphStoreURLs) func aChangeIsWhatEveryLaterReadSees(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      var author = try await graph.instance(of: Author.self, id: "1")
      author.name = "Ben"
      try await graph.update(author)
      #expect(try await graph.instance(of: Author.self, id: "1").name == "Ben")
    }
  }

  @Test(arguments: graphStoreURLs) func removeForgetsTheValueButKeepsItInTheStore(url: String) async throws {
    try await withStore(url) { store, _ in
      try await store.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      var author = try #require(try await graph.get(Author.self, id: "1"))
      author.name = "Unsaved"
      try await graph.update(author)
      #expect(graph.remove(Author.self, id: "1"))
      #expect(!graph.contains(Author.self, id: "1"))
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
      #expect(try await store.get(Author.self, id: "1")?.name == "Ana")
    }
  }

  @Test(arguments: graphStoreURLs) func deleteRemovesFromTheStoreOnSave(url: String) async throws {
    try await withStore(url) { store, _ in
      try await store.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      try await graph.delete(Author.self, id: "1")
      #expect(try await graph.get(Author.self, id: "1") == nil)
      #expect(try await store.get(Author.self, id: "1") != nil)
      try await graph.save()
      #expect(try await store.get(Author.self, id: "1") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func countLeavesOutDeletionsNotYetSaved(url: String) async throws {
    try await withStore(url) { store, _ in
      try await store.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      _ = try await graph.get(Author.self, id: "1")
      try await graph.upsert(Author(id: "2", name: "Ben"))
      #expect(graph.count == 2)
      try await graph.delete(Author.self, id: "1")
      #expect(graph.hasChanges)
      #expect(graph.count == 1)
    }
  }

  @Test(arguments: graphStoreURLs) func clearForgetsEveryValue(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      for id in ["a", "b", "c"] { _ = try await graph.instance(of: Author.self, id: id) }
      #expect(graph.count == 3)
      graph.clear()
      #expect(graph.count == 0)
      #expect(!graph.hasChanges)
    }
  }

  @Test(arguments: graphStoreURLs) func countAndSizeGrowWithTheValuesHeld(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      #expect(graph.count == 0)
      let empty = graph.estimatedByteSize
      _ = try await graph.instance(of: Author.self, id: "1")
      let one = graph.estimatedByteSize
      try await graph.upsert(Author(id: "2", name: String(repeating: "x", count: 1000)))
      #expect(graph.count == 2)
      #expect(empty < one)
      #expect(graph.estimatedByteSize >= one + 1000)
    }
  }

  @Test(arguments: graphStoreURLs) func optOutValuesAreNotRetainedByReads(url: String) async throws {
    try await withStore(url) { store, _ in
      try await store.insert(LogLine(id: 1, text: "started"))
      let graph = ModelGraph(store: store)
      #expect(try await graph.get(LogLine.self, id: 1)?.text == "started")
      #expect(!graph.contains(LogLine.self, id: 1))
      #expect(graph.count == 0)
    }
  }

  @Test(arguments: graphStoreURLs) func optOutValuesAreRetainedWhenAddedExplicitly(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.upsert(LogLine(id: 2, text: "kept"))
      #expect(graph.contains(LogLine.self, id: 2))
      try await graph.save()
      #expect(try await store.get(LogLine.self, id: 2)?.text == "kept")
    }
  }

  @Test(arguments: graphStoreURLs) func insertOfAnIDTheStoreHasFailsWithDuplicateID(url: String) async throws
  {
    try await withStore(url) { store, _ in
      try await store.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      await expectError(.duplicateID) { try await graph.insert(Author(id: "1", name: "Ben")) }
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
    }
  }

  @Test(arguments: graphStoreURLs) func updateOfAnUnknownIDFailsWithNotFound(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      await expectError(.notFound) { try await graph.update(Author(id: "9", name: "Nobody")) }
      #expect(graph.count == 0)
    }
  }

  @Test func updatingReturnsACopyWithOneFieldChanged() {
    let author = Author(id: "1", name: "Ana")
    let renamed = author.updating(\.name, to: "Ben")
    #expect(renamed.name == "Ben")
    #expect(author.name == "Ana")
    #expect(renamed.id == author.id)
  }
}
