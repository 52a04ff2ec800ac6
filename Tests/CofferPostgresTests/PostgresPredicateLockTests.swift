import Coffer
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// A conditional batch is serializable, and PostgreSQL records what a serializable transaction
/// read as predicate locks (`SIReadLock`): on the rows an index scan visits, but on the whole
/// table after a sequential scan. A whole-table lock makes every concurrent batch that writes
/// any row of the table a conflict, so a conditional batch reads through indexes, also on a
/// small table whose statistics make sequential scans look cheaper.
@Suite struct PostgresPredicateLockTests {
  @Test func aConditionalBatchOnASmallAnalyzedTableLocksRowsNotTheTable() async throws {
    let server = try PostgresTestServer.required()
    try await server.scratch().use { scratch in
      let store = try await scratch.open()
      try await store.insert((1...100).map { FaultCounter(id: Int64($0), value: 0) })
      let table = scratch.table("FaultCounter")
      // With statistics, the planner knows the table fits one page and prefers a sequential
      // scan to the primary key's index for a lookup by id.
      try await server.psql("ANALYZE \(table)")
      #expect(try await server.psql("SELECT relpages FROM pg_class WHERE oid = '\(table)'::regclass") == "1")

      // A serializable transaction that overlaps the batch keeps the batch's predicate locks
      // visible after it commits.
      let session = try PSQLSession(server)
      try await session.run(
        "BEGIN ISOLATION LEVEL SERIALIZABLE; SELECT 'open' || count(*) FROM pg_class WHERE false;",
        until: "open0")
      // It reads two rows and writes one: a row it writes needs no predicate lock of its own.
      try await store.transaction { tx in
        guard var counter = try await tx.get(FaultCounter.self, id: 7),
          let other = try await tx.get(FaultCounter.self, id: 8)
        else { return }
        counter.value += other.value + 1
        try tx.update(counter)
      }
      let locks = try await server.psql(
        "SELECT locktype FROM pg_locks WHERE mode = 'SIReadLock' AND relation = '\(table)'::regclass "
          + "ORDER BY locktype")
      try await session.finish("COMMIT;")

      let kinds = Set(locks.split(separator: "\n").map(String.init))
      #expect(!kinds.contains("relation"), "predicate locks on the table: \(locks)")
      #expect(kinds.contains("tuple"), "predicate locks on the table: \(locks)")
      #expect(try await store.get(FaultCounter.self, id: 7)?.value == 1)
      try await store.close()
    }
  }
}
