import Coffer
import Foundation
import Testing

@Suite struct ScratchGraphTests {
  @Test(arguments: graphStoreURLs) func aScratchGraphsChangesAreInvisibleToItsParent(url: String) async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      let scratch = graph.makeScratch()
      try await scratch.update(Author.self, id: "1") { $0.name = "Draft" }
      try await scratch.insert(Author(id: "2", name: "New"))
      #expect(try await scratch.get(Author.self, id: "1")?.name == "Draft")
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
      #expect(try await graph.get(Author.self, id: "2") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func aDiscardedScratchGraphChangesNothing(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      let scratch = graph.makeScratch()
      try await scratch.update(Author.self, id: "1") { $0.name = "Draft" }
      scratch.discard()
      #expect(try await scratch.get(Author.self, id: "1")?.name == "Ana")
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
      #expect(!graph.canRedo)
    }
  }

  @Test(arguments: graphStoreURLs) func commitMovesChangesIntoTheParentNotTheStore(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let scratch = graph.makeScratch()
      try await scratch.insert(Author(id: "2", name: "New"))
      try await scratch.commit()
      #expect(try await graph.get(Author.self, id: "2")?.name == "New")
      #expect(try await store.get(Author.self, id: "2") == nil)
      try await graph.save()
      #expect(try await store.get(Author.self, id: "2")?.name == "New")
    }
  }

  @Test(arguments: graphStoreURLs) func aCommitIsOneUndoStepInTheParent(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let scratch = graph.makeScratch()
      try await scratch.insert(Author(id: "1", name: "A"))
      try await scratch.insert(Author(id: "2", name: "B"))
      try await scratch.commit()
      #expect(graph.count == 2)
      try await graph.undo()
      #expect(graph.count == 0)
    }
  }

  @Test(arguments: graphStoreURLs) func nestedScratchGraphsCommitOneLevelAtATime(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let child = graph.makeScratch()
      let grandchild = child.makeScratch()
      try await grandchild.insert(Author(id: "1", name: "Deep"))
      try await grandchild.commit()
      #expect(try await child.get(Author.self, id: "1")?.name == "Deep")
      #expect(try await graph.get(Author.self, id: "1") == nil)
      try await child.commit()
      #expect(try await graph.get(Author.self, id: "1")?.name == "Deep")
    }
  }

  @Test(arguments: graphStoreURLs) func aScratchGraphReadsItsParentsUnsavedChanges(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Unsaved"))
      let scratch = graph.makeScratch()
      #expect(try await scratch.get(Author.self, id: "1")?.name == "Unsaved")
    }
  }

  @Test(arguments: graphStoreURLs) func theParentsWillChangeHookCanVetoACommit(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      graph.willChange(Author.self) { change in
        change.new?.name == "Bad" ? .veto("not in this graph") : .allow
      }
      let scratch = graph.makeScratch()
      try await scratch.insert(Author(id: "1", name: "Good"))
      try await scratch.insert(Author(id: "2", name: "Bad"))
      await expectError(.changeVetoed) { try await scratch.commit() }
      #expect(graph.count == 0)
      #expect(scratch.hasChanges)
    }
  }
}
