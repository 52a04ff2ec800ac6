@_spi(Backend) import Coffer
import CofferChildProcess
@_spi(Backend) import CofferPostgres
import CofferTestSupport
import Foundation
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A store whose URL names a primary and its synchronous standby, both on loopback: the primary
/// is killed while a task commits batches, the standby is promoted, and the store carries on.
@Suite("PostgreSQL failover between the hosts of one URL", .timeLimit(.minutes(2)))
struct PostgresFailoverTests {
  @Test(
    "after the primary dies and its standby is promoted, the store resumes and has every acknowledged batch")
  func resumesOnThePromotedStandby() async throws {
    if let reason = FailoverCluster.whyServersCannotRun() {
      print("Skipped the failover test: \(reason)")
      try Test.cancel("Skipped: \(reason)")
    }
    let folder = try TemporaryFolder("coffer-pg-failover")
    let primary = FailoverCluster(directory: folder.path + "/primary")
    let standby = FailoverCluster(directory: folder.path + "/standby")
    var failure: (any Error)?
    do {
      try await failOver(primary, standby)
    } catch {
      failure = error
    }
    // Both clusters go, however the test went.
    await primary.remove()
    await standby.remove()
    if let failure { throw failure }
  }

  private func failOver(_ primary: FailoverCluster, _ standby: FailoverCluster) async throws {
    let primaryPort = try await primary.startPrimary()
    let standbyPort = try await standby.startStandby(of: primary)
    let password = try primary.password()
    var configuration = try PostgresBackend.Configuration(
      url: StoreURL(
        "postgres://coffer@127.0.0.1:\(primaryPort),127.0.0.1:\(standbyPort)/coffer?connectTimeout=10&pool=4&tls=disable"
      ),
      environment: [:])
    configuration.password = password
    let backend = try await PostgresBackend(configuration: configuration)
    #expect(backend.name == "postgres://coffer@127.0.0.1:\(primaryPort),127.0.0.1:\(standbyPort)/coffer")
    let store = Store(backend: backend)
    let writer = BatchWriter(store: store)
    let writing = Task { await writer.run() }

    try await writer.waitFor(successes: 20, since: .now, within: .seconds(20))
    try await primary.script("kill")
    let killed = ContinuousClock.now
    // A failover manager would notice and promote the standby; until then no server accepts
    // writes, which the store reports: promote once a batch has failed saying so.
    try await writer.waitForFailure(since: killed, saying: "accepts writes", within: .seconds(30))
    let promoting = ContinuousClock.now
    try await standby.script("promote")
    let promoted = ContinuousClock.now
    let resumedInTime = (try? await writer.waitFor(successes: 20, since: killed, within: .seconds(30))) != nil
    // A call that never returns is a failure of its own; the test then goes on without it, so
    // that it ends and removes its clusters.
    let stop = try await writer.stop(within: .seconds(15))
    if stop.stopped { _ = await writing.value }
    try await store.close()

    if let pending = stop.pending {
      Issue.record("batch \(pending)'s call never returned after the server it was on died: a hang")
    }
    let calls = stop.done
    let afterKill = calls.filter { $0.started >= killed }
    let failures = calls.filter { $0.error != nil }
    let longest = calls.map { $0.ended - $0.started }.max() ?? .zero
    let acknowledged = calls.filter { $0.error == nil }.map(\.batch)
    #expect(resumedInTime, "the store did not commit 20 batches within 30 s of the kill")
    let resumed = try #require(
      afterKill.first { $0.error == nil }, "no batch was committed after the primary was killed")
    print(
      "Failover: the store committed again \((resumed.ended - killed).seconds) after the primary was killed, "
        + "\((resumed.ended - promoting).seconds) after `pg_ctl promote` started (it took "
        + "\((promoted - promoting).seconds)); \(failures.count) calls failed meanwhile, the longest call took "
        + "\(longest.seconds); \(acknowledged.count) batches acknowledged.")
    #expect(resumed.ended - promoting < .seconds(30))
    #expect(
      !afterKill.contains { $0.error == nil && $0.ended < promoting },
      "a batch was acknowledged while no server accepted writes")
    #expect(!failures.isEmpty, "no call failed between the kill and the promotion")
    for call in failures {
      #expect(call.error?.code == .unavailable, "batch \(call.batch): \(String(describing: call.error))")
      #expect(call.error?.description.contains(password) == false)
    }
    // While the primary is down and the standby not yet promoted, the error says so and names both.
    #expect(
      failures.contains { call in
        let message = call.error?.message ?? ""
        return message.contains("No server of database 'coffer' accepts writes")
          && message.contains("127.0.0.1:\(primaryPort) (connection refused)")
          && message.contains("127.0.0.1:\(standbyPort) (a standby, in recovery)")
      }, "\(failures.compactMap(\.error?.message))")
    // Each call is bounded by connectTimeout per host (10 s, generous because the whole suite
    // shares the cores with this test): never a hang.
    #expect(longest < .seconds(25), "a call took \(longest.seconds)")
    try await checkBatches(calls, on: standbyPort, password: password)
  }

  /// Every acknowledged batch is on the promoted server, and every other batch is there whole or
  /// not at all.
  private func checkBatches(_ calls: [BatchWriter.Call], on port: Int, password: String) async throws {
    var configuration = try PostgresBackend.Configuration(
      url: StoreURL("postgres://coffer@127.0.0.1:\(port)/coffer?tls=disable"), environment: [:])
    configuration.password = password
    let store = Store(backend: try await PostgresBackend(configuration: configuration))
    let stored = Set(try await store.query(FailoverRecord.self).fetch().map(\.id))
    try await store.close()
    var lost: [Int] = []
    var halves: [Int] = []
    for call in calls {
      let present = BatchWriter.ids(of: call.batch).filter(stored.contains).count
      if call.error == nil, present != BatchWriter.rowsPerBatch { lost.append(call.batch) }
      if present != 0, present != BatchWriter.rowsPerBatch { halves.append(call.batch) }
    }
    #expect(lost.isEmpty, "acknowledged batches missing on the promoted server: \(lost)")
    #expect(halves.isEmpty, "batches stored in part: \(halves)")
  }
}

/// A row of a batch the writer commits.
private struct FailoverRecord: Storable {
  var id: Int64
  var batch: Int64
  var payload: String
}

/// A task that commits batches of ``rowsPerBatch`` rows, one after another, and records each
/// call: when it started and ended, and its error.
private final class BatchWriter: Sendable {
  struct Call: Sendable {
    var batch: Int
    var started: ContinuousClock.Instant
    var ended: ContinuousClock.Instant
    var error: CofferError?
  }

  static let rowsPerBatch = 5
  let store: Store
  private let calls = LockedState<[Call]>([])
  private let stopped = LockedState(false)
  /// The batch whose call is under way, and whether the loop has ended.
  private let progress = LockedState<(pending: Int?, ended: Bool)>((nil, false))

  init(store: Store) { self.store = store }

  /// The ids of a batch's rows.
  static func ids(of batch: Int) -> [Int64] {
    (1...rowsPerBatch).map { Int64(batch * 100 + $0) }
  }

  /// Commits batches until ``stop()``; a failed batch is not tried again (it may have been
  /// committed without the acknowledgement arriving), the next one is.
  func run() async -> [Call] {
    var batch = 0
    while !stopped.withLock({ $0 }) {
      batch += 1
      let records = Self.ids(of: batch).map {
        FailoverRecord(id: $0, batch: Int64(batch), payload: String(repeating: "x", count: 100))
      }
      let started = ContinuousClock.now
      progress.withLock { $0.pending = batch }
      var failure: CofferError?
      do {
        try await store.insert(records)
      } catch {
        failure = error as? CofferError ?? CofferError(.backendFailure, "not a CofferError: \(error)")
      }
      let call = Call(batch: batch, started: started, ended: .now, error: failure)
      calls.withLock { $0.append(call) }
      progress.withLock { $0.pending = nil }
      if failure != nil { try? await Task.sleep(for: .milliseconds(50)) }
    }
    progress.withLock { $0.ended = true }
    return calls.withLock { $0 }
  }

  /// Asks the loop to stop and waits up to `limit` for it; returns the calls that returned, and
  /// the batch whose call had not returned by then, if any (`stopped` is false then).
  func stop(within limit: Duration) async throws -> (done: [Call], pending: Int?, stopped: Bool) {
    stopped.withLock { $0 = true }
    let deadline = ContinuousClock.now + limit
    while !progress.withLock({ $0.ended }), ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(20))
    }
    let (pending, ended) = progress.withLock { $0 }
    return (calls.withLock { $0 }, ended ? nil : pending, ended)
  }

  /// Waits until a batch that started at `since` or later has failed with a message containing
  /// `text`.
  func waitForFailure(since: ContinuousClock.Instant, saying text: String, within limit: Duration)
    async throws
  {
    let deadline = ContinuousClock.now + limit
    while !calls.withLock({
      $0.contains { $0.started >= since && $0.error?.message.contains(text) == true }
    }) {
      guard ContinuousClock.now < deadline else {
        throw CofferError(
          .timedOut, "No batch failed saying '\(text)' within \(limit) of the primary being killed.")
      }
      try await Task.sleep(for: .milliseconds(20))
    }
  }

  /// Waits until `successes` batches that started at `since` or later were acknowledged.
  func waitFor(successes: Int, since: ContinuousClock.Instant, within limit: Duration) async throws {
    let deadline = ContinuousClock.now + limit
    while calls.withLock({ $0.filter { $0.started >= since && $0.error == nil }.count }) < successes {
      guard ContinuousClock.now < deadline else {
        let last = calls.withLock { $0.last?.error }
        throw CofferError(
          .timedOut,
          "The writer did not commit \(successes) batches within \(limit); last error: \(String(describing: last))"
        )
      }
      try await Task.sleep(for: .milliseconds(20))
    }
  }
}

/// A throwaway cluster made by `scripts/test-postgres` (a primary) or
/// `scripts/test-postgres-standby` (its standby), in a folder of the test's.
private struct FailoverCluster {
  let directory: String

  /// The package's `scripts` folder.
  static var scripts: String { StandbyClusters.scripts }

  /// Why the PostgreSQL server programs cannot run here, or `nil` when they can.
  static func whyServersCannotRun() -> String? { StandbyClusters.whyServersCannotRun() }

  /// Starts a primary; returns its port.
  func startPrimary() async throws -> Int {
    try Self.port(in: try await Self.run("test-postgres", ["start", directory]))
  }

  /// Starts a synchronous standby of `primary`; returns its port.
  func startStandby(of primary: FailoverCluster) async throws -> Int {
    try Self.port(in: try await Self.run("test-postgres-standby", ["start", primary.directory, directory]))
  }

  /// Runs `scripts/test-postgres-standby COMMAND DIR` (`kill`, `promote`).
  func script(_ command: String) async throws {
    _ = try await Self.run("test-postgres-standby", [command, directory])
  }

  /// The cluster's password.
  func password() throws -> String {
    try String(contentsOfFile: directory + "/password", encoding: .utf8)
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  /// Stops the cluster and removes its folder; does nothing when there is none.
  func remove() async {
    _ = try? await Self.run("test-postgres", ["stop", directory])
  }

  /// The port of the store URL a script printed last.
  private static func port(in printed: String) throws -> Int { try StandbyClusters.port(in: printed) }

  /// Runs a script of the package and returns what it printed (see ``StandbyClusters``).
  private static func run(_ script: String, _ arguments: [String]) async throws -> String {
    try await StandbyClusters.run(script, arguments)
  }
}

extension Duration {
  /// "1.23 s".
  fileprivate var seconds: String {
    let value = Double(components.seconds) + Double(components.attoseconds) / 1e18
    return String(format: "%.2f s", value)
  }
}
