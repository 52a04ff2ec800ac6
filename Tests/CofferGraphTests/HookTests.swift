import Coffer
import Foundation
import Testing

/// What hooks saw, shared with the test.
final class HookLog: Sendable {
  let entries = LockedState<[String]>([])
  func add(_ entry: String) { entries.withLock { $0.append(entry) } }
  var all: [String] { entries.withLock { $0 } }
}

@Suite struct HookTests {
  @Test(arguments: graphStoreURLs) func aWillChangeHookCanVetoAChange(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      try await graph.insert(Author(id: "1", name: "Ana"))
      graph.willChange(Author.self) { change in
        change.new?.name == "Mallory" ? .veto("that name is taken") : .allow
      }
      let error = await #expect(throws: CofferError.self) {
        try await graph.update(Author.self, id: "1") { $0.name = "Mallory" }
      }
      #expect(error?.code == .changeVetoed)
      #expect(error?.description.contains("that name is taken") == true)
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
      try await graph.update(Author.self, id: "1") { $0.name = "Ann" }
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ann")
    }
  }

  @Test(arguments: graphStoreURLs) func aDidChangeHookSeesOldAndNewValues(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let log = HookLog()
      graph.didChange(Author.self) { change in
        log.add("\(change.old?.name ?? "-") -> \(change.new?.name ?? "-") \(change.changedFields.sorted())")
      }
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.update(Author.self, id: "1") { $0.name = "Ann" }
      try await graph.delete(Author.self, id: "1")
      #expect(
        log.all == [
          "- -> Ana [\"born\", \"email\", \"id\", \"name\"]", "Ana -> Ann [\"name\"]",
          "Ann -> - [\"born\", \"email\", \"id\", \"name\"]",
        ])
    }
  }

  @Test(arguments: graphStoreURLs) func aVetoedChangeRunsNoDidChangeHook(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let log = HookLog()
      graph.willChange(Author.self) { _ in .veto("read only") }
      graph.didChange(Author.self) { change in log.add("\(change.id)") }
      _ = try? await graph.insert(Author(id: "1", name: "Ana"))
      #expect(log.all.isEmpty)
      #expect(graph.count == 0)
    }
  }

  @Test(arguments: graphStoreURLs) func aRemovedHookIsNotCalled(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      let token = graph.willChange(Author.self) { _ in .veto("no") }
      graph.removeHook(token)
      try await graph.insert(Author(id: "1", name: "Ana"))
      #expect(graph.contains(Author.self, id: "1"))
    }
  }

  @Test(arguments: graphStoreURLs) func hooksOfOneTypeIgnoreOtherTypes(url: String) async throws {
    try await withStore(url) { store, _ in
      let graph = ModelGraph(store: store)
      graph.willChange(Note.self) { _ in .veto("notes are frozen") }
      try await graph.insert(Author(id: "1", name: "Ana"))
      await expectError(.changeVetoed) { try await graph.insert(Note(id: 1, title: "Milk", rank: 1)) }
    }
  }
}
