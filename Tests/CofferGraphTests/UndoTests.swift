import Coffer
import Foundation
import Testing

@Suite struct UndoTests {
  @Test(arguments: graphStoreURLs) func undoRestoresTheValueBeforeAChangeExactly(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      var ana = Author(id: "1", name: "Ana", email: "ana@example.com")
      ana.born = Date(timeIntervalSince1970: 1_700_000_000.25)
      try await graph.insert(ana)
      let before = try await graph.get(Author.self, id: "1")
      try await graph.update(Author(id: "1", name: "Changed"))
      #expect(try await graph.undo())
      #expect(try await graph.get(Author.self, id: "1") == before)
    }
  }

  @Test(arguments: graphStoreURLs) func redoPutsTheChangeBack(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.update(Author.self, id: "1") { $0.name = "Ann" }
      try await graph.undo()
      #expect(graph.canRedo)
      #expect(try await graph.redo())
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ann")
      #expect(!graph.canRedo)
    }
  }

  @Test(arguments: graphStoreURLs) func aBatchIsUndoneAsOneStep(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "0", name: "Before"))
      try await graph.batch { batch in
        batch.insert(Author(id: "1", name: "A"))
        batch.insert(Author(id: "2", name: "B"))
        batch.delete(Author.self, id: "0")
      }
      try await graph.undo()
      #expect(graph.count == 1)
      #expect(try await graph.get(Author.self, id: "0")?.name == "Before")
    }
  }

  @Test(arguments: graphStoreURLs) func undoEmitsEvents(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.update(Author.self, id: "1") { $0.name = "Ann" }
      let events = graph.events()
      try await graph.undo()
      try await graph.undo()
      let key = ModelKey(Author.self, id: "1")
      #expect(await next(2, of: events) == [.updated(key, fields: ["name"]), .deleted(key)])
    }
  }

  @Test(arguments: graphStoreURLs) func undoAfterSaveRecordsTheReverseChangeToSave(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.save()
      try await graph.update(Author.self, id: "1") { $0.name = "Ann" }
      try await graph.save()
      try await graph.undo()
      #expect(graph.hasChanges)
      #expect(try await store.get(Author.self, id: "1")?.name == "Ann")
      try await graph.save()
      #expect(try await store.get(Author.self, id: "1")?.name == "Ana")
      try await graph.undo()
      try await graph.save()
      #expect(try await store.get(Author.self, id: "1") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func aNewChangeClearsRedo(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.undo()
      try await graph.insert(Author(id: "2", name: "Ben"))
      #expect(!graph.canRedo)
      #expect(!(try await graph.redo()))
    }
  }

  @Test(arguments: graphStoreURLs) func undoWithNothingToUndoReturnsFalse(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      #expect(!graph.canUndo)
      let undone = try await graph.undo()
      #expect(!undone)
    }
  }

  @Test(arguments: graphStoreURLs) func undoKeepsAtMostTheLimitOfSteps(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      graph.undoLimit = 2
      for id in 1...3 { try await graph.insert(Author(id: "\(id)", name: "A")) }
      #expect(try await graph.undo())
      #expect(try await graph.undo())
      #expect(!(try await graph.undo()))
      #expect(graph.count == 1)
    }
  }
}
