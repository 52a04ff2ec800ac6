@_spi(Backend) import Coffer
@_spi(Backend) import CofferPostgres
import CofferStores
import CofferTestSupport
import Foundation
import Logging
import ServiceLifecycle
import Testing

/// `PostgresBackend` as a swift-service-lifecycle `Service`: it serves while the group runs and
/// is closed once the group shuts down or its task is cancelled.
@Suite struct PostgresServiceTests {
  func backend(_ scratch: PostgresScratch) async throws -> PostgresBackend {
    try await PostgresBackend(configuration: PostgresBackend.Configuration(url: scratch.url))
  }

  @Test func aGracefulShutdownOfItsServiceGroupClosesTheStore() async throws {
    try await PostgresTestServer.required().scratch().use { scratch in
      let backend = try await backend(scratch)
      let store = Store(backend: backend)
      let group = ServiceGroup(
        configuration: ServiceGroupConfiguration(services: [backend], logger: Logger(label: "coffer.tests")))
      let running = Task { try await group.run() }
      try await store.insert(FaultItem(id: 1, batch: 1, title: "while running"))
      #expect(try await store.get(FaultItem.self, id: 1)?.title == "while running")
      await group.triggerGracefulShutdown()
      try await running.value
      let error = await expectCofferError(.closed) { _ = try await store.get(FaultItem.self, id: 1) }
      #expect(error?.store == backend.name)
      _ = await expectCofferError(.closed) {
        try await store.insert(FaultItem(id: 2, batch: 2, title: "late"))
      }
    }
  }

  @Test func cancellingTheTaskThatRunsItClosesTheStore() async throws {
    try await PostgresTestServer.required().scratch().use { scratch in
      let backend = try await backend(scratch)
      let store = Store(backend: backend)
      let running = Task { try await backend.run() }
      try await store.insert(FaultItem(id: 1, batch: 1, title: "while running"))
      running.cancel()
      try await running.value
      _ = await expectCofferError(.closed) { _ = try await store.query(FaultItem.self).count() }
      _ = await expectCofferError(.closed) {
        try await store.insert(FaultItem(id: 2, batch: 2, title: "late"))
      }
    }
  }

  @Test func aStoreDroppedWithoutClosingClosesItsConnections() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch(options: ["pool": "3"]).use { scratch in
      let connections = """
        SELECT count(*) FROM pg_stat_activity WHERE application_name = 'coffer'
        AND position('\(scratch.schema)' IN query) > 0
        """
      func useAndDrop() async throws {
        let store = try await scratch.open()
        try await withThrowingTaskGroup(of: Void.self) { group in
          for id in Int64(1)...3 {
            group.addTask { try await store.insert(FaultItem(id: id, batch: id, title: "dropped")) }
          }
          try await group.waitForAll()
        }
        #expect(try await server.psql(connections) != "0")
      }
      try await useAndDrop()
      try await server.waitUntil(connections, prints: "0")
    }
  }
}
