@_spi(Backend) import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Whether this test run has a PostgreSQL server: skipped (with the reason) when it has none,
/// so a run without one says so instead of passing the PostgreSQL tests silently.
@Suite struct PostgresServerTests {
  @Test("the PostgreSQL test server answers")
  func serverAnswers() async throws {
    guard let url = TestServers.postgresURL else {
      print("Skipped the PostgreSQL tests: \(TestServers.postgresMissing)")
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    let store = try await Store.open(url: url)
    #expect(store.backend.capabilities.contains(.multiProcess))
    if let password = ProcessInfo.processInfo.environment["PGPASSWORD"], !password.isEmpty {
      #expect(!store.backend.name.contains(password))
    }
    try await store.close()
  }
}
