@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The stores every graph test runs on: one URL per backend;
/// each test gets a fresh scratch store derived from the URL.
let graphStoreURLs = ["memory:", "plist:", "sqlite:", "lmdb:"] + TestServers.storeURLs

/// A fresh directory for one test's files, removed afterwards.
struct TestDirectory {
  let path: String

  /// A file URL in the directory.
  func file(_ name: String) -> URL { URL(fileURLWithPath: path).appendingPathComponent(name) }
}

/// Runs `body` with a new, empty store of the kind `url` names, in a temporary directory that
/// is removed afterwards.
func withStore<Result>(
  _ url: String, _ body: (Store, TestDirectory) async throws -> Result
) async throws -> Result {
  let path = NSTemporaryDirectory() + "coffer-graph-tests-" + UUID().uuidString
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(atPath: path) }
  let registry = BackendRegistry.makeBuiltIn()
  let base = try StoreURL(url)
  let entry = try registry.entry(for: base)
  let scratch = entry.scratchURL(base, path, "store-" + UUID().uuidString)
  let store = Store(backend: try await registry.open(scratch))
  do {
    let result = try await body(store, TestDirectory(path: path))
    try await store.close()
    await entry.removeScratch?(scratch)
    return result
  } catch {
    try? await store.close()
    await entry.removeScratch?(scratch)
    throw error
  }
}

/// Collects the next `count` elements of an event stream.
func next(_ count: Int, of stream: AsyncStream<GraphEvent>) async -> [GraphEvent] {
  var iterator = stream.makeAsyncIterator()
  var events: [GraphEvent] = []
  while events.count < count, let event = await iterator.next() { events.append(event) }
  return events
}

/// An author: created with defaults by id.
struct Author: CreatableByID, Equatable {
  var id: String
  var name: String
  var email: String?
  var born: Date?

  init(id: String) {
    self.id = id
    self.name = "Anonymous"
  }

  init(id: String, name: String, email: String? = nil) {
    self.id = id
    self.name = name
    self.email = email
  }
}

/// A note that validates its own title and rank.
struct Note: Storable, Equatable, Validatable {
  var id: Int64
  var title: String
  var rank: Int

  func validate() -> [ValidationProblem] {
    var problems: [ValidationProblem] = []
    if title.count < 3 {
      problems.append(ValidationProblem(field: "title", "must have at least 3 characters"))
    }
    if rank < 0 { problems.append(ValidationProblem(field: "rank", "must not be negative")) }
    return problems
  }
}

/// A value the graph does not keep unless told to.
struct LogLine: Storable, Equatable, GraphOptOut {
  var id: Int64
  var text: String
}

/// A counter for read-modify-write races.
struct Counter: CreatableByID, Equatable {
  var id: Int64
  var count: Int
  init(id: Int64) {
    self.id = id
    self.count = 0
  }
}

/// Expects `body` to throw a ``CofferError`` with `code`.
func expectError(
  _ code: CofferError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void
) async {
  do {
    try await body()
    Issue.record("Expected a \(code) error; nothing was thrown.", sourceLocation: sourceLocation)
  } catch let error as CofferError {
    #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
  } catch {
    Issue.record("Expected a \(code) CofferError, got \(error).", sourceLocation: sourceLocation)
  }
}

/// Expects `body` to throw a ``CofferError`` with `code`.
func expectSyncError(
  _ code: CofferError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void
) {
  let error = #expect(throws: CofferError.self, sourceLocation: sourceLocation) { try body() }
  #expect(error?.code == code, "\(String(describing: error))", sourceLocation: sourceLocation)
}
