@_spi(Backend) import Coffer
import CofferConformance
import Foundation
import Synchronization
import Testing

// The example backend of the WritingABackend article (Sources/Coffer/Coffer.docc), kept here so that the guide's code keeps
// compiling and passing the conformance suite.

/// A backend that keeps its rows in memory, one private store per open.
final class ScratchpadBackend: StorageBackend {
  let name: String
  let capabilities: BackendCapabilities = [.crossEntityTransactions]

  private struct State {
    var tables: InMemoryTables
    var isClosed = false
  }
  private let state: Mutex<State>

  init(url: StoreURL) {
    name = url.description
    state = Mutex(State(tables: InMemoryTables(storeName: url.description)))
  }

  func prepare(_ schemas: [EntitySchema]) async throws -> [EntitySchema] {
    try state.withLock { state in
      try check(state)
      return try state.tables.prepare(schemas)  // every entity's schema, sorted by name
    }
  }

  func read(_ query: Query, _ visit: (any StoredFields) throws -> Void) async throws {
    try snapshot().read(query, visit)
  }

  func count(_ query: Query) async throws -> Int { try snapshot().count(query) }

  func apply(_ changes: ChangeSet) async throws -> ChangeSummary {
    try state.withLock { state in
      try check(state)
      return try state.tables.apply(changes)  // all or nothing
    }
  }

  func close() async throws { state.withLock { $0.isClosed = true } }

  /// The tables as they are now; later batches do not change the copy.
  private func snapshot() throws -> InMemoryTables {
    try state.withLock { state in
      try check(state)
      return state.tables
    }
  }

  private func check(_ state: State) throws {
    if state.isClosed { throw CofferError(.closed, "This store was closed; open it again.", store: name) }
  }
}

extension BackendRegistry {
  /// Registers the `scratchpad:` scheme.
  mutating func registerScratchpad() {
    register(
      Entry(
        scheme: "scratchpad", forms: ["scratchpad:"],
        open: { url in
          try url.checkOptions(allowed: [])
          return ScratchpadBackend(url: url)
        },
        scratchURL: { base, _, name in StoreURL(scheme: base.scheme, path: name) }))
  }
}

@Suite struct GuideBackendTests {
  @Test func scratchpadPassesTheConformanceSuite() async throws {
    var registry = BackendRegistry()
    registry.registerScratchpad()
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("scratchpad-conformance-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }

    let target = try await ConformanceTarget(url: "scratchpad:", registry: registry, directory: directory)
    for result in await ConformanceSuite.run(on: target) {
      if case .failed(let message) = result.outcome {
        Issue.record("\(result.check.id): \(message)")
      }
    }
  }

  @Test func checksNeedingUndeclaredCapabilitiesAreSkipped() async throws {
    var registry = BackendRegistry()
    registry.registerScratchpad()
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("scratchpad-conformance-\(UUID().uuidString)").path
    defer { try? FileManager.default.removeItem(atPath: directory) }

    let target = try await ConformanceTarget(url: "scratchpad:", registry: registry, directory: directory)
    let durability = ConformanceSuite.checks.filter { $0.requires.contains(.reopenable) }
    let results = await ConformanceSuite.run(on: target, checks: durability)
    #expect(!results.isEmpty)
    #expect(results.allSatisfy { if case .skipped = $0.outcome { true } else { false } })
  }
}
