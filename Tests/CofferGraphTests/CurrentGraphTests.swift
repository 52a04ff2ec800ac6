import Coffer
import Foundation
import Testing

@Suite struct CurrentGraphTests {
  @Test func thereIsNoCurrentGraphOutsideWithGraph() async throws {
    #expect(ModelGraph.current == nil)
    await expectError(.invalidConfiguration) { _ = try await Author.instance(id: "1") }
  }

  @Test(arguments: graphStoreURLs) func withGraphMakesTheGraphCurrentForItsBody(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await withGraph(graph) {
        #expect(ModelGraph.current === graph)
        _ = try await Author.instance(id: "1")
      }
      #expect(ModelGraph.current == nil)
      #expect(graph.contains(Author.self, id: "1"))
    }
  }

  @Test(arguments: graphStoreURLs) func concurrentTasksNeverSeeEachOthersGraph(url: String) async throws {
    try await withStore(url) { store, _ in
      let graphs = (0..<8).map { _ in ModelGraph(store: store) }
      try await withThrowingTaskGroup(of: Bool.self) { group in
        for (index, graph) in graphs.enumerated() {
          group.addTask {
            try await withGraph(graph) {
              for id in 0..<20 {
                _ = try await Author.instance(id: "\(index)-\(id)")
                await Task.yield()
                if ModelGraph.current !== graph { return false }
              }
              return true
            }
          }
        }
        for try await sawOwnGraph in group { #expect(sawOwnGraph) }
      }
      for (index, graph) in graphs.enumerated() {
        #expect(graph.count == 20)
        #expect(graph.contains(Author.self, id: "\(index)-0"))
        #expect(!graph.contains(Author.self, id: "\((index + 1) % 8)-0"))
      }
    }
  }

  @Test(arguments: graphStoreURLs) func nestedWithGraphRestoresTheOuterGraph(url: String) async throws {
    try await withStore(url) { store, _ in
      let outer = ModelGraph(store: store)
      let inner = outer.makeScratch()
      await withGraph(outer) {
        await withGraph(inner) { #expect(ModelGraph.current === inner) }
        #expect(ModelGraph.current === outer)
      }
    }
  }
}
