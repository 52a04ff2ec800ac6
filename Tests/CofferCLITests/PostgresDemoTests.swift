@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The chat demo and the conformance command on the PostgreSQL test server, each in a schema
/// of its own that is dropped afterwards.
@Suite struct PostgresDemoTests {
  /// A scratch store on the test server (a new schema) and the registry entry that removes it.
  private func scratch() throws -> (url: StoreURL, entry: BackendRegistry.Entry)? {
    guard let server = TestServers.postgresURL else { return nil }
    let base = try StoreURL(server)
    let entry = try BackendRegistry.builtIn.entry(for: base)
    return (entry.scratchURL(base, "cli-tests", "demo-\(UUID().uuidString)"), entry)
  }

  @Test("coffer demo --store postgres://… runs the chat demo on the server, twice")
  func demoRunsOnPostgres() async throws {
    guard let (url, entry) = try scratch() else {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    for _ in 0..<2 {
      let run = try await CommandRun.coffer(["demo", "--store", url.description])
      #expect(run.status == 0, "stderr: \(run.errorOutput)")
      #expect(run.output.contains("Store: \(url.description)"))
      #expect(run.output.contains("Unread counts: Weekend hike 4, Release planning 3, all threads 7"))
      #expect(run.output.contains("refused, nothing stored: duplicateID:"))
      #expect(run.output.hasSuffix("Done.\n"))
    }
    await entry.removeScratch?(url)
  }

  @Test("coffer conformance postgres://… runs checks on the server")
  func conformanceCommandRunsOnPostgres() async throws {
    guard let server = TestServers.postgresURL else {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    let run = try await CommandRun.coffer(["conformance", server, "--filter=crud."])
    #expect(run.status == 0, "stderr: \(run.errorOutput)")
    #expect(run.output.contains(" passed, 0 failed"))
    #expect(!run.output.contains(" 0 passed"))
  }
}
