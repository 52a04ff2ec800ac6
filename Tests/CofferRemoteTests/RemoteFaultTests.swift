@_spi(Backend) import Coffer
import CofferServer
import CofferStores
import CofferWire
import Foundation
import Testing

@testable import CofferRemote

/// A counter whose increments are not idempotent: a batch applied twice shows.
struct Tally: Storable, Equatable {
  var id: String
  var count: Int64
}

/// A note, for the feed.
struct Jotting: Storable, Equatable {
  var id: Int64
  var text: String
}

/// Opens a `coffer+http://` store with the built-in registry.
func openRemote(_ url: String) async throws -> Store {
  try await Store.open(url: url, registry: .makeBuiltIn())
}

/// Adds one to the tally `id`, through an update by query (an increment the server applies).
func increment(_ store: Store, _ id: String) async throws {
  try await store.query(Tally.self).filter(FieldRef("id") == id).update([.add("count", .int(1))])
}

@Suite(
  .enabled(
    if: ProcessInfo.processInfo.environment["COFFER_TEST_REMOTE"] != nil,
    "runs in a step of its own (COFFER_TEST_REMOTE=1, as make test does), not beside the rest of the suite"
  )
)
struct RemoteFaultTests {
  @Test func aServerThatIsNotThereIsUnavailableAndNothingWasApplied() async throws {
    // A port that was just free: nothing listens there.
    let proxy = try FaultyProxy(upstream: 9)
    let port = proxy.port
    proxy.stop()
    let started = ContinuousClock.now
    let error = await #expect(throws: CofferError.self) {
      _ = try await openRemote("coffer+http://127.0.0.1:\(port)/s?retryFor=0.3")
    }
    #expect(error?.code == .unavailable)
    #expect(ContinuousClock.now - started < .seconds(5))
  }

  @Test func aBatchWhoseAnswerIsLostIsSentAgainAndAppliedOnce() async throws {
    let server = try await ServedStores(backing: "sqlite:")
    defer { Task { await server.stop() } }
    let proxy = try FaultyProxy(upstream: server.port)
    defer { proxy.stop() }
    let store = try await openRemote("coffer+http://127.0.0.1:\(proxy.port)/lost")
    try await store.prepare([Tally.self])
    try await store.insert(Tally(id: "a", count: 0))
    for _ in 0..<3 {
      proxy.set(.loseNextAnswer)
      try await increment(store, "a")
    }
    #expect(proxy.answersLost == 3)
    #expect(try await store.get(Tally.self, id: "a")?.count == 3)
    try await store.close()
  }

  @Test func theSameIdempotencyKeyIsAppliedOnceAndReplayedAfter() async throws {
    let server = try await ServedStores(backing: "memory:")
    defer { Task { await server.stop() } }
    let store = try await openRemote(server.url + "/replay")
    try await store.prepare([Tally.self])
    try await store.insert(Tally(id: "a", count: 0))
    let backend = try #require(store.backend as? RemoteBackend)
    let schema = try #require(store.schema(of: "Tally"))
    let batch = ChangeSet(
      [.updateMatching(entity: "Tally", filter: .all, changes: [.add("count", .int(5))])],
      layouts: [
        "Tally": schema
      ])
    let body = try RemoteBackend.encode(WireBatch(batch, references: .expanded))
    let first = try await backend.sendBatch(body, key: "key-1")
    let second = try await backend.sendBatch(body, key: "key-1")
    #expect(first.summary.updated == 1 && !first.replayed)
    #expect(second.summary.updated == 1 && second.replayed)
    #expect(try await store.get(Tally.self, id: "a")?.count == 5)
    try await store.close()
  }

  @Test func aSlowServerGivesAnUnknownOutcomeForABatchAndTheBatchIsAppliedOnce() async throws {
    let server = try await ServedStores(backing: "sqlite:")
    defer { Task { await server.stop() } }
    let proxy = try FaultyProxy(upstream: server.port)
    defer { proxy.stop() }
    let store = try await openRemote("coffer+http://127.0.0.1:\(proxy.port)/slow?timeout=0.3&retryFor=0.5")
    try await store.prepare([Tally.self])
    try await store.insert(Tally(id: "a", count: 0))
    proxy.set(.delay(.seconds(2)))
    let error = await #expect(throws: CofferError.self) { try await increment(store, "a") }
    #expect(error?.code == .outcomeUnknown)
    #expect(error?.message.contains("may or may not have been applied") == true)
    let read = await #expect(throws: CofferError.self) { _ = try await store.get(Tally.self, id: "a") }
    #expect(read?.code == .unavailable)
    proxy.set(.pass)
    // Every try carried the same key: the server applied the batch once, however often it came.
    let direct = try await openRemote(server.url + "/slow")
    try await direct.prepare([Tally.self])
    #expect(try await direct.get(Tally.self, id: "a")?.count == 1)
    try await direct.close()
    try await store.close()
  }

  @Test func aServerErrorArrivesAsTheSameCofferErrorCase() async throws {
    let server = try await ServedStores(backing: "memory:")
    defer { Task { await server.stop() } }
    let store = try await openRemote(server.url + "/errors")
    try await store.prepare([Tally.self])
    try await store.insert(Tally(id: "a", count: 0))
    let duplicate = await #expect(throws: CofferError.self) {
      try await store.insert(Tally(id: "a", count: 1))
    }
    #expect(duplicate?.code == .duplicateID)
    #expect(duplicate?.entity == "Tally")
    #expect(duplicate?.idValue == .string("a"))
    #expect(duplicate?.store == "coffer+http://127.0.0.1:\(server.port)/errors")
    let missing = await #expect(throws: CofferError.self) { try await store.update(Tally(id: "b", count: 1)) }
    #expect(missing?.code == .notFound)
    let backend = try #require(store.backend as? RemoteBackend)
    let unknown = await #expect(throws: CofferError.self) {
      _ = try await backend.count(Query(entity: "Nowhere"))
    }
    #expect(unknown?.code == .unknownEntity)
    try await store.close()
  }

  /// A later version of ``Jotting``, with one more field.
  struct JottingWithMood: Storable, Equatable {
    static var entityName: String { "Jotting" }
    var id: Int64
    var text: String
    var mood: String?
  }

  @Test func aClientWhoseLayoutIsNoLongerTheStoredSchemaReadsOnInItsOwnLayout() async throws {
    let server = try await ServedStores(backing: "memory:")
    defer { Task { await server.stop() } }
    let older = try await openRemote(server.url + "/layouts")
    try await older.prepare([Jotting.self])
    try await older.insert(Jotting(id: 1, text: "first"))
    #expect(try await older.get(Jotting.self, id: 1) == Jotting(id: 1, text: "first"))
    // Another client evolves the stored schema: the older client's digest no longer names it.
    let newer = try await openRemote(server.url + "/layouts")
    try await newer.prepare([JottingWithMood.self])
    try await newer.insert(JottingWithMood(id: 2, text: "second", mood: "calm"))
    // The older client's batch names its layout by a digest the server refuses; it is sent again whole.
    try await older.insert(Jotting(id: 3, text: "third"))
    #expect(
      try await newer.get(JottingWithMood.self, id: 3) == JottingWithMood(id: 3, text: "third", mood: nil))
    #expect(try await older.get(Jotting.self, id: 2) == Jotting(id: 2, text: "second"))
    #expect(try await older.query(Jotting.self).fetch().map(\.id) == [1, 2, 3])
    #expect(try await newer.get(JottingWithMood.self, id: 2)?.mood == "calm")
    let backend = try #require(older.backend as? RemoteBackend)
    let layout = try #require(older.schema(of: "Jotting"))
    #expect(backend.layoutDigests.digest(of: layout) == nil, "the refused digest is not sent again")
    try await older.close()
    try await newer.close()
  }

  @Test func tokensAreCheckedAndNeverShown() async throws {
    let secret = "tok-\(UUID().uuidString)"
    let reader = "read-\(UUID().uuidString)"
    let server = try await ServedStores(
      backing: "memory:",
      tokens: [
        CofferServer.Token(secret: secret, scopes: [.read, .write, .admin]),
        CofferServer.Token(secret: reader, scopes: [.read]),
      ])
    defer { Task { await server.stop() } }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-token-\(UUID())").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    func tokenFile(_ token: String) throws -> String {
      let path = folder + "/\(UUID().uuidString).token"
      try (token + "\n").write(toFile: path, atomically: true, encoding: .utf8)
      return path
    }
    // No token, and a wrong one: refused when the store opens.
    let none = await #expect(throws: CofferError.self) { _ = try await openRemote(server.url + "/t") }
    #expect(none?.code == .accessDenied)
    let wrong = await #expect(throws: CofferError.self) {
      _ = try await openRemote(server.url + "/t?tokenFile=\(try tokenFile("nope"))")
    }
    #expect(wrong?.code == .accessDenied)
    // The right one works, and shows nowhere.
    let store = try await openRemote(server.url + "/t?tokenFile=\(try tokenFile(secret))")
    try await store.prepare([Tally.self])
    try await store.insert(Tally(id: "a", count: 0))
    let backend = try #require(store.backend as? RemoteBackend)
    let shown = [backend.name, "\(backend.configuration)", String(reflecting: backend.configuration)]
    for text in shown { #expect(!text.contains(secret), "\(text)") }
    let duplicate = await #expect(throws: CofferError.self) {
      try await store.insert(Tally(id: "a", count: 0))
    }
    #expect(duplicate.map { !"\($0)".contains(secret) } == true)
    // A read token may not write (nor prepare: the server asks for the write scope to prepare).
    let readOnly = try await openRemote(server.url + "/t?tokenFile=\(try tokenFile(reader))")
    let refused = await #expect(throws: CofferError.self) {
      try await readOnly.insert(Tally(id: "b", count: 0))
    }
    #expect(refused?.code == .accessDenied)
    #expect(refused.map { !"\($0)".contains(reader) } == true)
    try await readOnly.close()
    try await store.close()
  }

  @Test func aFollowerOfTheFeedGoesOnAcrossAServerRestartWithoutLoss() async throws {
    try await followAcrossRestart()
  }

  func followAcrossRestart() async throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-restart-\(UUID())")
      .path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let first = try await ServedStores(backing: "sqlite:", directory: directory)
    let port = first.port
    let url = first.url + "/feed?retryFor=20"
    let writer = try await openRemote(url)
    try await writer.prepare([Jotting.self])
    try await writer.recordChanges()
    let follower = try await openRemote(url)
    try await follower.prepare([Jotting.self])
    let reading = Task {
      var seen: [Int64] = []
      for try await batch in follower.changes(after: nil, follow: true) {
        for change in batch.changes { if case .int(let id) = change.id { seen.append(id) } }
        if seen.count == 20 { break }
      }
      return seen
    }
    for id in Int64(0)..<10 { try await writer.insert(Jotting(id: id, text: "before")) }
    await first.stop(keepingStores: true)
    let second = try await ServedStores(backing: "sqlite:", port: port, directory: directory)
    defer { Task { await second.stop() } }
    for id in Int64(10)..<20 { try await writer.insert(Jotting(id: id, text: "after")) }
    let seen = try await reading.value
    #expect(seen == Array(0..<20))
    try await writer.close()
    try await follower.close()
  }
}
