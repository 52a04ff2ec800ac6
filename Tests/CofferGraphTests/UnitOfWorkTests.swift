@_spi(Backend) import Coffer
import Foundation
import Testing

@Suite struct UnitOfWorkTests {
  @Test(arguments: graphStoreURLs) func manualPolicyWritesNothingUntilSave(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.insert(Author(id: "2", name: "Ben"))
      #expect(try await store.query(Author.self).count() == 0)
      #expect(graph.hasChanges)
      let summary = try await graph.save()
      #expect(summary.inserted == 2)
      #expect(try await store.query(Author.self).count() == 2)
      #expect(!graph.hasChanges)
    }
  }

  @Test(arguments: graphStoreURLs) func aSaveThatTheStoreRefusesWritesNothingAndKeepsTheChanges(url: String)
    async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.insert(Author(id: "2", name: "Ben"))
      try await store.insert(Author(id: "2", name: "Stored meanwhile"))
      await expectError(.duplicateID) { try await graph.save() }
      #expect(try await store.get(Author.self, id: "1") == nil)
      #expect(graph.hasChanges)
    }
  }

  @Test(arguments: graphStoreURLs) func immediatePolicySavesBeforeTheCallReturns(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .immediate)
      try await graph.insert(Author(id: "1", name: "Ana"))
      #expect(try await store.get(Author.self, id: "1")?.name == "Ana")
      try await graph.update(Author.self, id: "1") { $0.name = "Ben" }
      #expect(try await store.get(Author.self, id: "1")?.name == "Ben")
    }
  }

  @Test(arguments: graphStoreURLs) func everyNChangesSavesOnTheNthChange(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .everyChanges(3))
      try await graph.insert(Author(id: "1", name: "A"))
      try await graph.insert(Author(id: "2", name: "B"))
      #expect(try await store.query(Author.self).count() == 0)
      try await graph.insert(Author(id: "3", name: "C"))
      #expect(try await store.query(Author.self).count() == 3)
    }
  }

  @Test(arguments: graphStoreURLs) func backgroundPolicySavesAndFlushWaitsForIt(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .background)
      for id in 1...20 { try await graph.insert(Author(id: "\(id)", name: "A\(id)")) }
      try await graph.flush()
      #expect(try await store.query(Author.self).count() == 20)
      #expect(!graph.hasChanges)
    }
  }

  @Test(arguments: graphStoreURLs) func withoutAutoSaveSuspendsSavingAndRestoresThePolicy(url: String)
    async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .immediate)
      try await graph.withoutAutoSave {
        #expect(graph.isAutoSaveSuspended)
        try await graph.insert(Author(id: "1", name: "Hydrated"))
        #expect(try await store.query(Author.self).count() == 0)
      }
      #expect(!graph.isAutoSaveSuspended)
      #expect(graph.autoSave == .immediate)
      try await graph.insert(Author(id: "2", name: "After"))
      #expect(try await store.query(Author.self).count() == 2)
    }
  }

  @Test(arguments: graphStoreURLs) func withoutAutoSaveRestoresThePolicyWhenTheBodyThrows(url: String)
    async throws
  {
    struct Interrupted: Error {}
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .immediate)
      await #expect(throws: Interrupted.self) {
        try await graph.withoutAutoSave {
          try await graph.insert(Author(id: "1", name: "Half"))
          throw Interrupted()
        }
      }
      #expect(!graph.isAutoSaveSuspended)
      try await graph.insert(Author(id: "2", name: "After"))
      #expect(try await store.query(Author.self).count() == 2)
    }
  }

  @Test(arguments: graphStoreURLs) func savesReplayChangesInTheOrderTheyWereMade(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "A"))
      try await graph.save()
      try await graph.delete(Author.self, id: "1")
      try await graph.insert(Author(id: "2", name: "B"))
      try await graph.update(Author.self, id: "2") { $0.email = "b@example.com" }
      let summary = try await graph.save()
      #expect(summary == ChangeSummary(inserted: 1, updated: 0, deleted: 1))
      #expect(try await store.all(Author.self) == [Author(id: "2", name: "B", email: "b@example.com")])
    }
  }

  @Test(arguments: graphStoreURLs) func flushReportsABackgroundSaveTheStoreRefused(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .background)
      try await graph.withoutAutoSave { try await graph.insert(Author(id: "3", name: "C")) }
      try await store.insert(Author(id: "3", name: "Stored meanwhile"))
      try await graph.insert(Author(id: "2", name: "B"))
      await expectError(.duplicateID) { try await graph.flush() }
      #expect(graph.hasChanges)
      #expect(try await store.get(Author.self, id: "2") == nil)
    }
  }

  @Test(arguments: graphStoreURLs) func endingWithoutAutoSaveSavesNothingUntilTheNextChange(url: String)
    async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .immediate)
      try await graph.withoutAutoSave { try await graph.insert(Author(id: "1", name: "Hydrated")) }
      #expect(graph.hasChanges)
      #expect(try await store.query(Author.self).count() == 0)
      try await graph.insert(Author(id: "2", name: "After"))
      #expect(!graph.hasChanges)
      #expect(try await store.query(Author.self).count() == 2)
    }
  }

  @Test(arguments: graphStoreURLs) func everyNChangesCountsEachRecordABatchChanges(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .everyChanges(3))
      try await graph.batch { batch in
        batch.insert(Author(id: "1", name: "A"))
        batch.insert(Author(id: "2", name: "B"))
      }
      #expect(try await store.query(Author.self).count() == 0)
      try await graph.batch { batch in
        batch.insert(Author(id: "3", name: "C"))
        batch.insert(Author(id: "4", name: "D"))
      }
      #expect(try await store.query(Author.self).count() == 4)
      #expect(!graph.hasChanges)
    }
  }

  @Test(arguments: graphStoreURLs) func changesInsideWithoutAutoSaveCountTowardEveryNChanges(url: String)
    async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .everyChanges(3))
      try await graph.withoutAutoSave {
        for id in 1...3 { try await graph.insert(Author(id: "\(id)", name: "A\(id)")) }
      }
      #expect(try await store.query(Author.self).count() == 0)
      try await graph.insert(Author(id: "4", name: "D"))
      #expect(try await store.query(Author.self).count() == 4)
    }
  }

  @Test(arguments: graphStoreURLs) func aChangeThatLeavesAValueAsItWasDoesNotCount(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .everyChanges(2))
      try await graph.insert(Author(id: "1", name: "A"))
      try await graph.upsert(Author(id: "1", name: "A"))
      #expect(try await store.query(Author.self).count() == 0)
      try await graph.insert(Author(id: "2", name: "B"))
      #expect(try await store.query(Author.self).count() == 2)
    }
  }
}
