@_spi(Backend) import Coffer
import CofferConformance
import CofferMemory
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Makes a target for `url` over a fresh registry and a temporary folder removed afterwards.
func withTarget<R>(_ url: String, _ body: (ConformanceTarget) async throws -> R) async throws -> R {
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("coffer-conformance-\(UUID().uuidString)").path
  defer { try? FileManager.default.removeItem(atPath: directory) }
  let target = try await ConformanceTarget(
    url: url, registry: .forConformanceTests(), directory: directory, child: cofferChild)
  return try await body(target)
}

/// The `coffer` executable, built next to the test bundle, as the multi-process checks' second
/// process; `nil` (and those checks skip, saying why) when it was not built.
let cofferChild: ConformanceTarget.ChildProgram? = {
  let path = Bundle.main.bundleURL.appendingPathComponent("coffer").path
  return FileManager.default.isExecutableFile(atPath: path) ? .coffer(at: path) : nil
}()

/// The outcome of one check on a target.
func outcome(of id: String, on url: String) async throws -> ConformanceOutcome {
  let check = try #require(ConformanceSuite.checks.first { $0.id == id })
  return try await withTarget(url) { await ConformanceSuite.run(check, on: $0) }.outcome
}

/// The backends in this package: named memory stores (reopenable), a plain MemoryBackend,
/// property-list files in both formats, SQLite, LMDB, and PostgreSQL when the test run has a
/// server (see `TestServers`; `make test` always starts one).
let backendURLs =
  ["memory:", "memory-unnamed:", "plist:", "plist:?format=xml", "sqlite:", "lmdb:"] + TestServers.storeURLs

/// Every conformance check on every backend in this package (and the test servers' stores when
/// they run): the matrix `Docs/Conformance.md` describes, one test case per check and backend.
@Suite struct ConformanceMatrix {
  @Test(arguments: backendURLs, ConformanceSuite.checks)
  func check(url: String, check: ConformanceCheck) async throws {
    let result = try await withTarget(url) { await ConformanceSuite.run(check, on: $0) }
    switch result.outcome {
    case .passed: break
    case .failed(let message): Issue.record("\(check.id) failed on \(url): \(message)")
    case .skipped(let reason):
      print("Skipped \(check.id) on \(url): \(reason)")
      try Test.cancel("Skipped: \(reason)")
    }
  }
}

@Suite struct ConformanceSuiteShape {
  @Test func idsAreUniqueAndThereAreAtLeastSixty() {
    let ids = ConformanceSuite.checks.map(\.id)
    #expect(Set(ids).count == ids.count)
    #expect(ids.count >= 60)
  }

  @Test func everyIDIsAreaDotName() {
    for check in ConformanceSuite.checks {
      #expect(check.id.hasPrefix(check.area + "."), "\(check.id)")
      #expect(!check.rule.isEmpty, "\(check.id)")
    }
  }

  @Test func markdownListsEveryCheckUnderItsArea() {
    let markdown = ConformanceSuite.markdownList()
    #expect(markdown.hasPrefix("# Conformance checks"))
    for check in ConformanceSuite.checks { #expect(markdown.contains("`\(check.id)`"), "\(check.id)") }
    for area in Set(ConformanceSuite.checks.map(\.area)) { #expect(markdown.contains("\n## \(area)\n")) }
    #expect(markdown.contains("| reopenable, schemaEvolution |"))
  }

  @Test func targetReadsCapabilitiesAndRejectsUnknownSchemes() async throws {
    try await withTarget("memory:") { target in
      #expect(target.name == "memory:")
      #expect(target.capabilities.contains(.reopenable))
    }
    try await withTarget("memory-unnamed:") { #expect(!$0.capabilities.contains(.reopenable)) }
    await #expect(throws: CofferError.self) { try await withTarget("nosuch:") { _ in } }
  }

  @Test func missingCapabilityIsASkipNamingIt() async throws {
    let result = try await outcome(of: "durability.reopen-keeps-data", on: "memory-unnamed:")
    #expect(result == .skipped("needs capability reopenable, which memory-unnamed: does not declare"))
  }

  @Test func runOnTargetRunsTheGivenChecksInOrder() async throws {
    let some = Array(ConformanceSuite.checks.prefix(3))
    let results = try await withTarget("memory:") { await ConformanceSuite.run(on: $0, checks: some) }
    #expect(results.map(\.check.id) == some.map(\.id))
    #expect(results.allSatisfy { $0.outcome == .passed })
  }
}

@Suite struct ScratchStoreCleanup {
  @Test func namedMemoryScratchStoresAreForgottenAfterEachCheck() async throws {
    let namespace = MemoryNamespace()
    var registry = BackendRegistry()
    registry.registerMemory(namespace: namespace)
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-scratch-\(UUID())")
      .path
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let target = try await ConformanceTarget(url: "memory:", registry: registry, directory: directory)
    let results = await ConformanceSuite.run(on: target, checks: Array(ConformanceSuite.checks.prefix(5)))
    #expect(results.allSatisfy { $0.outcome == .passed })
    #expect(namespace.names.isEmpty, "left behind: \(namespace.names)")
  }
}
