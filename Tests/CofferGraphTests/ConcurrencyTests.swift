import Coffer
import Foundation
import Testing

@Suite struct ConcurrencyTests {
  @Test(arguments: graphStoreURLs) func concurrentGetOrCreateYieldsOneValue(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let events = graph.events(for: Author.self)
      try await withThrowingTaskGroup(of: Author.self) { group in
        for _ in 0..<16 { group.addTask { try await graph.instance(of: Author.self, id: "shared") } }
        for try await author in group { #expect(author == Author(id: "shared")) }
      }
      #expect(graph.count == 1)
      try await graph.insert(Author(id: "marker", name: "M"))
      #expect(
        await next(2, of: events) == [
          .inserted(ModelKey(Author.self, id: "shared")), .inserted(ModelKey(Author.self, id: "marker")),
        ])
    }
  }

  @Test(arguments: graphStoreURLs) func concurrentReadModifyWritesLoseNothing(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .background)
      _ = try await graph.instance(of: Counter.self, id: 1)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<8 {
          group.addTask {
            for _ in 0..<25 { try await graph.update(Counter.self, id: 1) { $0.count += 1 } }
          }
        }
        try await group.waitForAll()
      }
      try await graph.flush()
      #expect(try await graph.get(Counter.self, id: 1)?.count == 200)
      #expect(try await store.get(Counter.self, id: 1)?.count == 200)
    }
  }

  @Test(arguments: graphStoreURLs) func concurrentSavesWriteEachChangeOnce(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store, autoSave: .immediate)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<8 {
          group.addTask {
            for id in 0..<10 { try await graph.insert(Author(id: "\(task)-\(id)", name: "A")) }
          }
        }
        try await group.waitForAll()
      }
      #expect(try await store.query(Author.self).count() == 80)
      #expect(!graph.hasChanges)
    }
  }

  @Test(arguments: graphStoreURLs) func concurrentScratchGraphsCommitIntoOneParent(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await withThrowingTaskGroup(of: Void.self) { group in
        for task in 0..<6 {
          group.addTask {
            let scratch = graph.makeScratch()
            try await withGraph(scratch) {
              for id in 0..<5 { _ = try await Author.instance(id: "\(task)-\(id)") }
            }
            try await scratch.commit()
          }
        }
        try await group.waitForAll()
      }
      #expect(graph.count == 30)
      try await graph.save()
      #expect(try await store.query(Author.self).count() == 30)
    }
  }
}
