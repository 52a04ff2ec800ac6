import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// `?statementTimeout=`: a statement the server takes longer on (here one waiting for a lock
/// another session holds) is cancelled and reported as `timedOut`, and a batch applies nothing.
@Suite struct PostgresTimeoutTests {
  /// The store's time limit. Short, but long enough that the statements that do not wait stay
  /// well under it on a busy machine.
  static let timeout = "0.25"

  /// A counter (id 1, value 0) and an empty FaultItem table, made without a time limit.
  func setUp(_ scratch: PostgresScratch) async throws {
    let setup = try await scratch.open()
    try await setup.insert(FaultCounter(id: 1, value: 0))
    try await setup.prepare([FaultItem.self])
    try await setup.close()
  }

  // The lock is held until the batch has failed: without the timeout it would wait for ever and
  // run into the time limit.
  @Test(.timeLimit(.minutes(2))) func aBatchWaitingPastTheTimeoutIsTimedOutAndAppliesNothing() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await setUp(scratch)
      let store = try await scratch.open(options: ["statementTimeout": Self.timeout])
      let holder = try PSQLSession(server)
      try await holder.run(
        "BEGIN; SELECT value FROM \(scratch.table("FaultCounter")) WHERE id = 1 FOR UPDATE; SELECT 'locked';",
        until: "locked")
      let error = await expectCofferError(.timedOut) {
        try await store.batch { batch in
          for id in Int64(1)...3 { try batch.insert(FaultItem(id: id, batch: 1, title: "late \(id)")) }
          try batch.update(FaultCounter(id: 1, value: 1))
        }
      }
      try await holder.finish("COMMIT;")
      #expect(
        error?.names(address: server.address, database: server.database) == true,
        "\(String(describing: error))")
      #expect(error?.message.contains("statementTimeout") == true)
      #expect(error?.reveals(server.password) == false)

      #expect(try await store.query(FaultItem.self).count() == 0, "inserts before the timeout were applied")
      #expect(try await store.get(FaultCounter.self, id: 1)?.value == 0)
      // The connection stays good: the same batch goes in whole once the lock is gone.
      try await store.batch { batch in
        for id in Int64(1)...3 { try batch.insert(FaultItem(id: id, batch: 1, title: "in time \(id)")) }
        try batch.update(FaultCounter(id: 1, value: 1))
      }
      #expect(try await store.query(FaultItem.self).count() == 3)
      #expect(try await store.get(FaultCounter.self, id: 1)?.value == 1)
      try await store.close()
    }
  }

  @Test func aReadWaitingPastTheTimeoutIsTimedOut() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      try await setUp(scratch)
      let store = try await scratch.open(options: ["statementTimeout": Self.timeout])
      try await store.prepare([FaultItem.self])
      let holder = try PSQLSession(server)
      try await holder.run(
        "BEGIN; LOCK TABLE \(scratch.table("FaultItem")) IN ACCESS EXCLUSIVE MODE; SELECT 'locked';",
        until: "locked")
      let error = await expectCofferError(.timedOut) { _ = try await store.query(FaultItem.self).count() }
      try await holder.finish("ROLLBACK;")
      #expect(
        error?.names(address: server.address, database: server.database) == true,
        "\(String(describing: error))")
      #expect(error?.entity == "FaultItem")
      #expect(try await store.query(FaultItem.self).count() == 0)
      try await store.close()
    }
  }
}
