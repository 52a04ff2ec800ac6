import Coffer
import Foundation
import Testing

@Suite struct ObservationTests {
  @Test(arguments: graphStoreURLs) func anObservedQueryYieldsItsResultThenAFreshOneAfterEachChange(
    url: String
  )
    async throws
  {
    try await withStore(url) { store, _ in
      try await store.insert(Note(id: 1, title: "Milk", rank: 1))
      var results = store.query(Note.self).filter(FieldRef("rank") > 0).observe().makeAsyncIterator()
      #expect(try await results.next()?.map(\.id) == [1])
      try await store.insert(Note(id: 2, title: "Eggs", rank: 2))
      #expect(try await results.next()?.map(\.id) == [1, 2])
      try await store.delete(Note.self, id: 1)
      #expect(try await results.next()?.map(\.id) == [2])
    }
  }

  @Test(arguments: graphStoreURLs) func aGraphSaveRefreshesAnObservedQuery(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      var results = store.query(Author.self).observe().makeAsyncIterator()
      #expect(try await results.next()?.isEmpty == true)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.save()
      #expect(try await results.next()?.map(\.name) == ["Ana"])
    }
  }

  @Test(arguments: graphStoreURLs) func aChangeThatLeavesTheResultAloneYieldsNothing(url: String) async throws
  {
    try await withStore(url) { store, _ in
      var results = store.query(Note.self).filter(FieldRef("rank") > 5).observe().makeAsyncIterator()
      #expect(try await results.next()?.isEmpty == true)
      try await store.insert(Note(id: 1, title: "Low", rank: 1))
      try await store.insert(Author(id: "1", name: "Other entity"))
      try await store.insert(Note(id: 2, title: "High", rank: 9))
      #expect(try await results.next()?.map(\.id) == [2])
    }
  }
}
