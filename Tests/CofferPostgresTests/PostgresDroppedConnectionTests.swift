import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// Connections the server ends (`pg_terminate_backend`, as an administrator, a proxy or a
/// failover does): the store opens new ones, and a batch that was cut applied nothing.
@Suite struct PostgresDroppedConnectionTests {
  /// Runs `call` up to twice: a connection found dead may fail the first call (with
  /// `unavailable`), and the next one must then succeed. Returns the result and the failure.
  func soonSucceeding<R>(
    _ server: PostgresTestServer, sourceLocation: SourceLocation = #_sourceLocation,
    _ call: () async throws -> R
  ) async throws -> (R, CofferError?) {
    do {
      return (try await call(), nil)
    } catch let error as CofferError {
      #expect(error.code == .unavailable, "\(error)", sourceLocation: sourceLocation)
      #expect(
        error.names(address: server.address, database: server.database), "\(error)",
        sourceLocation: sourceLocation)
      #expect(!error.reveals(server.password), sourceLocation: sourceLocation)
      return (try await call(), error)
    }
  }

  @Test func aConnectionDroppedBetweenCallsIsReplaced() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch(options: ["pool": "1"]).use { scratch in
      let store = try await scratch.open()
      try await store.insert(FaultItem(id: 1, batch: 1, title: "before"))
      #expect(try await scratch.terminateConnections() == 1)
      let (read, _) = try await soonSucceeding(server) { try await store.get(FaultItem.self, id: 1) }
      #expect(read?.title == "before")
      try await store.insert(FaultItem(id: 2, batch: 2, title: "after"))
      #expect(try await store.query(FaultItem.self).count() == 2)
      try await store.close()
    }
  }

  @Test func everyConnectionDroppedBetweenWritesIsReplaced() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch(options: ["pool": "3"]).use { scratch in
      let store = try await scratch.open()
      try await store.prepare([FaultItem.self])
      // Three reads at once open three connections, each of which last read the store's table.
      try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<3 { group.addTask { try await store.query(FaultItem.self).count() } }
        for try await count in group { #expect(count == 0) }
      }
      #expect(try await scratch.terminateConnections() >= 1)
      for round in Int64(1)...3 {
        _ = try await soonSucceeding(server) {
          try await store.insert(FaultItem(id: round, batch: round, title: "round \(round)"))
        }
      }
      #expect(try await store.query(FaultItem.self).count() == 3)
      try await store.close()
    }
  }

  @Test func aBatchCutByADroppedConnectionAppliesNothing() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch(options: ["pool": "1"]).use { scratch in
      let store = try await scratch.open()
      try await store.insert(FaultCounter(id: 1, value: 0))
      try await store.prepare([FaultItem.self])
      // Another session locks the counter, so the batch waits there after its inserts went in.
      let holder = try PSQLSession(server)
      try await holder.run(
        "BEGIN; SELECT value FROM \(scratch.table("FaultCounter")) WHERE id = 1 FOR UPDATE; SELECT 'locked';",
        until: "locked")
      let batch = Task {
        try await store.batch { batch in
          for id in Int64(1)...3 { try batch.insert(FaultItem(id: id, batch: 1, title: "cut \(id)")) }
          try batch.update(FaultCounter(id: 1, value: 1))
        }
      }
      try await server.waitUntil(
        """
        SELECT count(*) FROM pg_stat_activity WHERE application_name = 'coffer' AND wait_event_type = 'Lock'
        AND position('\(scratch.schema)' IN query) > 0
        """)
      #expect(try await scratch.terminateConnections(where: "wait_event_type = 'Lock'") == 1)
      let cut = await expectCofferError(.unavailable) { _ = try await batch.value }
      #expect(
        cut?.names(address: server.address, database: server.database) == true, "\(String(describing: cut))")
      #expect(cut?.reveals(server.password) == false)
      try await holder.finish("COMMIT;")

      let (count, _) = try await soonSucceeding(server) { try await store.query(FaultItem.self).count() }
      #expect(count == 0, "the inserts before the cut were applied")
      #expect(try await store.get(FaultCounter.self, id: 1)?.value == 0)
      #expect(try await server.psql("SELECT count(*) FROM \(scratch.table("FaultItem"))") == "0")

      // The same batch, run again, goes in whole.
      try await store.batch { batch in
        for id in Int64(1)...3 { try batch.insert(FaultItem(id: id, batch: 1, title: "again \(id)")) }
        try batch.update(FaultCounter(id: 1, value: 1))
      }
      #expect(try await store.query(FaultItem.self).count() == 3)
      #expect(try await store.get(FaultCounter.self, id: 1)?.value == 1)
      try await store.close()
    }
  }
}
