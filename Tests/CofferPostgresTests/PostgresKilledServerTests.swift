@_spi(Backend) import Coffer
import CofferChildProcess
import CofferStores
import CofferTestSupport
import Foundation
import Testing

/// The server killed (`pg_ctl stop -m immediate`) while a task commits batches: calls during the
/// outage throw `unavailable`, and after a restart every acknowledged batch is there and no
/// batch is there in part.
@Suite struct PostgresKilledServerTests {
  /// Rows per batch.
  static let rowsPerBatch: Int64 = 5

  /// What the writing task saw.
  struct Log {
    var acknowledged: [Int64] = []
    var failures: [CofferError] = []
    var otherErrors: [String] = []
    var stop = false
    /// The batch being committed, and since when.
    var inFlight: (number: Int64, since: ContinuousClock.Instant)?
  }

  /// Commits batches 1, 2, 3, … of ``rowsPerBatch`` rows each until told to stop, noting which
  /// were acknowledged and how the others failed.
  static func write(to store: Store, log: LockedState<Log>) async {
    var number: Int64 = 0
    while !log.withLock({ $0.stop }) {
      number += 1
      let batchNumber = number
      log.withLock { $0.inFlight = (batchNumber, .now) }
      defer { log.withLock { $0.inFlight = nil } }
      do {
        try await store.batch { batch in
          for row in 0..<rowsPerBatch {
            try batch.insert(
              FaultItem(
                id: batchNumber * 100 + row, batch: batchNumber, title: "batch \(batchNumber) row \(row)"))
          }
        }
        log.withLock { $0.acknowledged.append(batchNumber) }
      } catch let error as CofferError {
        log.withLock { $0.failures.append(error) }
        try? await Task.sleep(for: .milliseconds(20))
      } catch {
        log.withLock { $0.otherErrors.append("\(type(of: error)): \(error)") }
      }
    }
  }

  /// Waits until `condition` holds on the log; fails after `seconds`. Alone the writer commits
  /// 20 batches in about a second; beside the whole suite on 2 cores it once took more than a
  /// minute, so the bound only catches a writer that stopped.
  static func waitFor(
    _ what: String, seconds: Int = 300, in log: LockedState<Log>, _ condition: (Log) -> Bool
  ) async throws {
    let deadline = ContinuousClock.now + .seconds(seconds)
    while !log.withLock({ condition($0) }) {
      guard ContinuousClock.now < deadline else {
        let state = log.withLock { log in
          "\(log.acknowledged.count) acknowledged, \(log.failures.count) failed, in flight: "
            + (log.inFlight.map { "batch \($0.number) for \(ContinuousClock.now - $0.since)" } ?? "none")
        }
        Issue.record("Waited \(seconds) s in vain for \(what): \(state)")
        throw PSQLFailure(sql: what, output: "timed out")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
  }

  @Test func everyAcknowledgedBatchSurvivesAKilledServerAndNoneIsHalfThere() async throws {
    _ = try PostgresTestServer.required()
    try await PrivateCluster.with { cluster in
      let store = try await openStore(cluster.url)
      try await store.prepare([FaultItem.self])
      let log = LockedState(Log())
      let writer = Task { await Self.write(to: store, log: log) }
      try await Self.waitFor("20 acknowledged batches", in: log) { $0.acknowledged.count >= 20 }
      try await cluster.kill()
      try await Self.waitFor("3 failed batches", in: log) { $0.failures.count >= 3 }
      let read = await expectCofferError(.unavailable) { _ = try await store.query(FaultItem.self).count() }
      log.withLock { $0.stop = true }
      await writer.value
      let seen = log.withLock { $0 }

      try await cluster.restart()
      let reopened = try await openStore(cluster.url)
      var rowsByBatch: [Int64: Int64] = [:]
      for item in try await reopened.query(FaultItem.self).fetch() {
        rowsByBatch[item.batch, default: 0] += 1
      }
      for number in seen.acknowledged {
        #expect(
          rowsByBatch[number] == Self.rowsPerBatch,
          "batch \(number) was acknowledged; rows: \(rowsByBatch[number] ?? 0)")
      }
      for (number, rows) in rowsByBatch.sorted(by: { $0.key < $1.key }) {
        #expect(rows == Self.rowsPerBatch, "batch \(number) is there in part: \(rows) rows")
      }
      let address = "\(cluster.url.host ?? ""):\(cluster.url.port ?? 0)"
      let database = String(cluster.url.path.dropFirst())
      for failure in seen.failures + [read].compactMap({ $0 }) {
        #expect(failure.code == .unavailable, "\(failure)")
        #expect(failure.names(address: address, database: database), "\(failure)")
        #expect(!failure.reveals(cluster.password), "\(failure)")
      }
      #expect(seen.otherErrors.isEmpty, "\(seen.otherErrors)")

      // The store that lived through the outage works again too (its first call may still meet a
      // dead connection).
      let next = seen.acknowledged.count + seen.failures.count + 1000
      do {
        try await store.insert(FaultItem(id: Int64(next) * 100, batch: Int64(next), title: "after"))
      } catch let error as CofferError where error.code == .unavailable {
        try await store.insert(FaultItem(id: Int64(next) * 100, batch: Int64(next), title: "after"))
      }
      #expect(try await reopened.get(FaultItem.self, id: Int64(next) * 100)?.title == "after")
      try await store.close()
      try await reopened.close()
    }
  }
}
