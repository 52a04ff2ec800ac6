@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The stores a following graph is tested on: those that record a change feed and can be
/// opened twice — once for the graph, once for the commits made elsewhere (PostgreSQL when a
/// test server is given).
let followedStoreKinds = ["memory", "sqlite", "lmdb"] + TestServers.storeURLs

/// Runs `body` with two stores on the same new data, the feed on: the graph's and another.
func withFollowedStore(
  _ kind: String, _ body: (_ store: Store, _ elsewhere: Store) async throws -> Void
) async throws {
  let path = NSTemporaryDirectory() + "coffer-graph-follow-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  let registry = BackendRegistry.makeBuiltIn()
  var scratch: (StoreURL, BackendRegistry.Entry)?
  let url: String
  switch kind {
  case "memory": url = "memory:follow-\(UUID().uuidString)?changes=on"
  case "sqlite": url = "sqlite://\(path)/store.sqlite?changes=on"
  case "lmdb": url = "lmdb://\(path)/store?changes=on"
  default:
    // A server's URL: a scratch store of its own, removed afterwards.
    let base = try StoreURL(kind)
    let entry = try registry.entry(for: base)
    let place = entry.scratchURL(base, path, "follow-" + UUID().uuidString)
    scratch = (place, entry)
    url = place.description + (place.description.contains("?") ? "&" : "?") + "changes=on"
  }
  let store = try await Store.open(url: url, registry: registry)
  let elsewhere = try await Store.open(url: url, registry: registry)
  do {
    try await store.prepare([Author.self])
    try await elsewhere.prepare([Author.self])
    try await body(store, elsewhere)
  } catch {
    try? await elsewhere.close()
    try? await store.close()
    if let (place, entry) = scratch { await entry.removeScratch?(place) }
    throw error
  }
  try await elsewhere.close()
  try await store.close()
  if let (place, entry) = scratch { await entry.removeScratch?(place) }
}

/// Waits up to 30 s for `condition`, checking every 5 ms.
func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
  let deadline = ContinuousClock.now + .seconds(30)
  while try await !condition() {
    guard ContinuousClock.now < deadline else {
      Issue.record("Waited 30 s for \(what).")
      return
    }
    try await Task.sleep(for: .milliseconds(5))
  }
}

@Suite struct FollowingTests {
  @Test(arguments: followedStoreKinds) func aCommitElsewhereRefreshesAHeldValueWithItsEvents(kind: String)
    async throws
  {
    try await withFollowedStore(kind) { store, elsewhere in
      try await elsewhere.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      try await graph.followStore()
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
      let all = graph.events()
      let names = graph.events(for: Author.self, id: "1", field: "name")
      let emails = graph.events(for: Author.self, field: "email")
      try await elsewhere.update(Author(id: "1", name: "Ann"))
      try await elsewhere.update(Author(id: "1", name: "Ann", email: "ann@example.com"))
      let key = ModelKey(Author.self, id: "1")
      #expect(await next(2, of: all) == [.updated(key, fields: ["name"]), .updated(key, fields: ["email"])])
      #expect(await next(1, of: names) == [.updated(key, fields: ["name"])])
      #expect(await next(1, of: emails) == [.updated(key, fields: ["email"])])
      #expect(
        try await graph.get(Author.self, id: "1") == Author(id: "1", name: "Ann", email: "ann@example.com"))
      #expect(!graph.hasChanges)
      #expect(!graph.canUndo)
    }
  }

  @Test(arguments: followedStoreKinds) func insertsAndDeletesElsewhereReachTheGraph(kind: String) async throws
  {
    try await withFollowedStore(kind) { store, elsewhere in
      try await elsewhere.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      try await graph.followStore()
      #expect(try await graph.get(Author.self, id: "1") != nil)
      #expect(try await graph.get(Author.self, id: "2") == nil)
      let events = graph.events()
      try await elsewhere.insert(Author(id: "2", name: "Ben"))
      try await elsewhere.delete(Author.self, id: "1")
      #expect(
        await next(2, of: events) == [
          .inserted(ModelKey(Author.self, id: "2")), .deleted(ModelKey(Author.self, id: "1")),
        ])
      #expect(try await graph.get(Author.self, id: "1") == nil)
      #expect(try await graph.get(Author.self, id: "2")?.name == "Ben")
      #expect(!graph.canUndo)
    }
  }

  @Test(arguments: followedStoreKinds) func theGraphsOwnSavesComeBackAsNothing(kind: String) async throws {
    try await withFollowedStore(kind) { store, elsewhere in
      let graph = ModelGraph(store: store)
      try await graph.followStore()
      try await graph.insert(Author(id: "1", name: "Ana"))
      try await graph.insert(Author(id: "2", name: "Ben"))
      let events = graph.events()
      try await graph.save()
      try await graph.update(Author.self, id: "1") { $0.name = "Ann" }
      try await graph.save()
      // A commit elsewhere after both saves: once its event arrives, the feed has brought the
      // saves back too, and they added nothing.
      try await elsewhere.update(Author(id: "2", name: "Bo"))
      let one = ModelKey(Author.self, id: "1")
      let two = ModelKey(Author.self, id: "2")
      #expect(
        await next(5, of: events) == [
          .saved(one), .saved(two), .updated(one, fields: ["name"]), .saved(one),
          .updated(two, fields: ["name"]),
        ])
      #expect(!graph.hasChanges)
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ann")
    }
  }

  @Test(arguments: followedStoreKinds) func anUnsavedChangeKeepsItsFieldsAndTakesTheOthers(kind: String)
    async throws
  {
    try await withFollowedStore(kind) { store, elsewhere in
      try await elsewhere.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      try await graph.followStore()
      try await graph.update(Author.self, id: "1") { $0.name = "Ana (draft)" }
      let events = graph.events()
      try await elsewhere.update(Author(id: "1", name: "Anna", email: "anna@example.com"))
      let key = ModelKey(Author.self, id: "1")
      #expect(
        await next(2, of: events) == [.updated(key, fields: ["email"]), .conflicted(key, fields: ["name"])])
      #expect(
        try await graph.get(Author.self, id: "1")
          == Author(id: "1", name: "Ana (draft)", email: "anna@example.com"))
      #expect(graph.hasChanges)
      #expect(graph.canUndo)
      try await graph.save()
      #expect(
        try await elsewhere.get(Author.self, id: "1")
          == Author(id: "1", name: "Ana (draft)", email: "anna@example.com"))
    }
  }

  @Test(arguments: followedStoreKinds) func aValueDeletedElsewhereButChangedHereIsKept(kind: String)
    async throws
  {
    try await withFollowedStore(kind) { store, elsewhere in
      try await elsewhere.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      try await graph.followStore()
      try await graph.update(Author.self, id: "1") { $0.email = "ana@example.com" }
      let events = graph.events()
      try await elsewhere.delete(Author.self, id: "1")
      let key = ModelKey(Author.self, id: "1")
      #expect(await next(1, of: events) == [.conflicted(key, fields: ["id", "name", "email", "born"])])
      #expect(try await graph.get(Author.self, id: "1")?.email == "ana@example.com")
      try await graph.save()
      #expect(try await elsewhere.get(Author.self, id: "1")?.email == "ana@example.com")
    }
  }

  @Test(arguments: followedStoreKinds) func valuesHeldBeforeFollowingAreReadAgain(kind: String) async throws {
    try await withFollowedStore(kind) { store, elsewhere in
      try await elsewhere.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
      try await elsewhere.update(Author(id: "1", name: "Ann"))
      let events = graph.events()
      try await graph.followStore()
      #expect(await next(1, of: events) == [.updated(ModelKey(Author.self, id: "1"), fields: ["name"])])
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ann")
    }
  }

  @Test(arguments: followedStoreKinds) func stoppingLeavesTheValuesAsTheyWere(kind: String) async throws {
    try await withFollowedStore(kind) { store, elsewhere in
      try await elsewhere.insert(Author(id: "1", name: "Ana"))
      let graph = ModelGraph(store: store)
      try await graph.followStore()
      #expect(graph.isFollowingStore)
      _ = try await graph.get(Author.self, id: "1")
      graph.stopFollowingStore()
      #expect(!graph.isFollowingStore)
      try await elsewhere.update(Author(id: "1", name: "Ann"))
      // A second graph that follows sees the update; the first, which stopped, keeps its value.
      let second = ModelGraph(store: store)
      try await second.followStore()
      _ = try await second.get(Author.self, id: "1")
      try await elsewhere.update(Author(id: "1", name: "Anne"))
      try await eventually("the second graph's refresh") {
        try await second.get(Author.self, id: "1")?.name == "Anne"
      }
      #expect(try await graph.get(Author.self, id: "1")?.name == "Ana")
    }
  }

  @Test func followingNeedsAFeedAndARootGraph() async throws {
    let store = try await Store.open(url: "memory:", registry: .makeBuiltIn())
    let graph = ModelGraph(store: store)
    await expectError(.invalidConfiguration) { try await graph.followStore() }
    await expectError(.unsupported) { try await graph.makeScratch().followStore() }
    try await store.close()
  }
}
