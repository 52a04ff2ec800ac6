import Coffer
import Foundation
import Testing

@Suite struct ValidationTests {
  @Test(arguments: graphStoreURLs) func anInvalidChangeIsRejectedAndTheOldValueKept(url: String) async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Note(id: 1, title: "Milk", rank: 1))
      await expectError(.invalidValue) {
        try await graph.update(Note(id: 1, title: "M", rank: 1))
      }
      #expect(try await graph.get(Note.self, id: 1)?.title == "Milk")
      #expect(!graph.canRedo)
    }
  }

  @Test(arguments: graphStoreURLs) func theErrorListsEveryProblem(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let error = await #expect(throws: CofferError.self) {
        try await graph.insert(Note(id: 1, title: "M", rank: -1))
      }
      #expect(error?.validationProblems.map(\.field) == ["title", "rank"])
      #expect(error?.description.contains("must have at least 3 characters") == true)
      #expect(error?.description.contains("must not be negative") == true)
      #expect(error?.entity == "Note")
      #expect(graph.count == 0)
    }
  }

  @Test(arguments: graphStoreURLs) func aRejectedChangeEmitsValidationFailed(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let events = graph.events()
      _ = try? await graph.insert(Note(id: 1, title: "M", rank: 0))
      #expect(
        await next(1, of: events) == [
          .validationFailed(
            ModelKey(Note.self, id: 1),
            problems: [ValidationProblem(field: "title", "must have at least 3 characters")])
        ])
    }
  }

  @Test(arguments: graphStoreURLs) func oneInvalidValueRejectsTheWholeBatch(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      await expectError(.invalidValue) {
        try await graph.batch { batch in
          batch.insert(Note(id: 1, title: "Fine", rank: 1))
          batch.insert(Note(id: 2, title: "X", rank: 1))
        }
      }
      #expect(graph.count == 0)
    }
  }
}
