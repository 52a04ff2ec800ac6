import Coffer
import Foundation
import Testing

@Suite struct EventTests {
  @Test(arguments: graphStoreURLs) func changesEmitInsertedUpdatedAndDeleted(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let events = graph.events()
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.update(Author.self, id: "1") { $0.email = "ana@example.com" }
      try await graph.delete(Author.self, id: "1")
      let key = ModelKey(Author.self, id: "1")
      #expect(
        await next(3, of: events) == [.inserted(key), .updated(key, fields: ["email"]), .deleted(key)])
    }
  }

  @Test(arguments: graphStoreURLs) func anUpdateNamesEveryChangedFieldAndNoOther(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      let events = graph.events()
      try await graph.update(Author(id: "1", name: "Ann", email: "ann@example.com"))
      #expect(
        await next(1, of: events) == [.updated(ModelKey(Author.self, id: "1"), fields: ["name", "email"])])
    }
  }

  @Test(arguments: graphStoreURLs) func saveEmitsSavedForEachRecord(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.insert(Author(id: "2", name: "Ben"))
      let events = graph.events()
      try await graph.save()
      #expect(
        await next(2, of: events) == [
          .saved(ModelKey(Author.self, id: "1")), .saved(ModelKey(Author.self, id: "2")),
        ])
    }
  }

  @Test(arguments: graphStoreURLs) func aSilentChangeEmitsNothing(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let events = graph.events()
      try await graph.insert(Author(id: "1", name: "Quiet"), options: .silent)
      try await graph.insert(Author(id: "2", name: "Loud"))
      #expect(await next(1, of: events) == [.inserted(ModelKey(Author.self, id: "2"))])
      #expect(graph.contains(Author.self, id: "1"))
    }
  }

  @Test(arguments: graphStoreURLs) func anEntityStreamCarriesOnlyThatEntity(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let events = graph.events(for: Note.self)
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.insert(Note(id: 1, title: "Milk", rank: 1))
      #expect(await next(1, of: events) == [.inserted(ModelKey(Note.self, id: 1))])
    }
  }

  @Test(arguments: graphStoreURLs) func aFieldStreamCarriesOnlyChangesToThatField(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Note(id: 1, title: "Milk", rank: 1))
      let titles = graph.events(for: Note.self, id: 1, field: "title")
      try await graph.update(Note.self, id: 1) { $0.rank = 2 }
      try await graph.update(Note.self, id: 1) { $0.title = "Eggs" }
      #expect(await next(1, of: titles) == [.updated(ModelKey(Note.self, id: 1), fields: ["title"])])
    }
  }

  @Test(arguments: graphStoreURLs) func aChangeThatChangesNothingEmitsNothing(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      let events = graph.events()
      try await graph.update(Author(id: "1", name: "Ana"))
      try await graph.delete(Author.self, id: "1")
      #expect(await next(1, of: events) == [.deleted(ModelKey(Author.self, id: "1"))])
    }
  }
}
