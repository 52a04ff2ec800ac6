import Coffer
import Foundation
import Testing

/// A shelf that books stand on.
struct Shelf: Storable, Equatable {
  var id: Int64
  var name: String
}

/// A book on a shelf: deleted with it.
struct Book: Storable, Equatable {
  var id: Int64
  var shelfID: Int64
  var title: String

  static var references: [EntityReference] { [.to(Shelf.self, by: "shelfID", onDelete: .cascade)] }
}

/// A label that may name a shelf: cleared when the shelf is deleted.
struct ShelfLabel: Storable, Equatable {
  var id: Int64
  var shelfID: Int64?

  static var references: [EntityReference] { [.to(Shelf.self, by: "shelfID", onDelete: .nullify)] }
}

@Suite struct ReferenceTests {
  @Test(arguments: graphStoreURLs) func deletingThroughTheGraphAppliesTheStoresDeleteRules(url: String)
    async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Shelf(id: 1, name: "top"))
      try await graph.insert(Book(id: 10, shelfID: 1, title: "A"))
      try await graph.insert(ShelfLabel(id: 5, shelfID: 1))
      try await graph.save()
      try await graph.delete(Shelf.self, id: 1)
      let summary = try await graph.save()
      #expect(summary.deleted == 1)
      #expect(try await store.query(Book.self).count() == 0)
      #expect(!graph.contains(Book.self, id: 10))
      #expect(try await graph.get(Book.self, id: 10) == nil)
      #expect(try await graph.get(ShelfLabel.self, id: 5) == ShelfLabel(id: 5, shelfID: nil))
    }
  }

  @Test(arguments: graphStoreURLs) func savingAValueThatRefersToAMissingRowIsRefused(url: String) async throws
  {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Book(id: 10, shelfID: 99, title: "A"))
      let error = await #expect(throws: CofferError.self) { try await graph.save() }
      #expect(error?.code == .referenceViolation)
      #expect(graph.hasChanges)
    }
  }
}
