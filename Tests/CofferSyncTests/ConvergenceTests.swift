import CofferTestSupport
import Foundation
import Testing

/// The convergence proof: random schedules over a lossy, duplicating, reordering transport with
/// restarts, on replicas of mixed backends, each checked against the reference merge.
///
/// `make test` runs a short run; `make sync-check` sets `COFFER_SYNC_SCHEDULES` (10,000) and
/// `COFFER_SYNC_SEED` for the long one. A failure prints its seed and a shrunk schedule.
@Suite struct ConvergenceTests {
  static var environment: [String: String] { ProcessInfo.processInfo.environment }

  @Test func randomSchedulesConvergeToTheReferenceMerge() async throws {
    var mixes: [[String]] = [
      ["memory", "sqlite", "lmdb"], ["sqlite", "lmdb", "plist", "memory"],
      ["memory", "memory", "lmdb", "sqlite", "plist"],
    ]
    if ReplicaPlaces.available("served-sqlite", postgresURL: nil) {
      mixes.append(["served-sqlite", "memory", "lmdb", "served-lmdb"])
    }
    try await Self.check(mixes, schedules: Self.schedules)
  }

  /// The mixes with PostgreSQL replicas, direct and served through `coffer+http://`.
  static let postgresMixes: [[String]] = [
    ["memory", "postgres", "sqlite"], ["served-postgres", "sqlite", "postgres"],
    ["postgres", "served-sqlite", "lmdb", "served-postgres"],
  ]

  @Test func schedulesWithPostgresAndServedReplicasConverge() async throws {
    guard TestServers.postgresURL != nil else {
      try Test.cancel("Skipped: \(TestServers.postgresMissing)")
    }
    try await Self.check(Self.postgresMixes, schedules: max(6, Self.schedules / 4))
  }

  /// Genesis schedules: the first two replicas hold rows before sync (with the implicit genesis
  /// stamp), and bootstraps, some cut off, run between random replicas.
  @Test func schedulesWithGenesisRowsAndBootstrapsConverge() async throws {
    var mixes: [[String]] = [["sqlite", "memory", "lmdb"], ["lmdb", "plist", "sqlite", "memory"]]
    if ReplicaPlaces.available("served-sqlite", postgresURL: nil) {
      mixes.append(["served-sqlite", "lmdb", "memory", "served-lmdb"])
    }
    if TestServers.postgresURL != nil { mixes.append(["postgres", "served-postgres", "sqlite"]) }
    try await Self.check(mixes, schedules: Self.schedules, genesis: true)
  }

  /// Partial schedules: some replicas subscribe to part of the rows (see
  /// ``ConvergenceChecker/someItemsAllPins`` and ``ConvergenceChecker/fewItemsNoLabels``); each
  /// must hold the reference merge restricted to its subscriptions, the others the whole of it.
  @Test func schedulesWithSubscribedReplicasConverge() async throws {
    var mixes: [[String]] = [["memory", "sqlite", "lmdb"], ["sqlite", "lmdb", "plist", "memory"]]
    if ReplicaPlaces.available("served-sqlite", postgresURL: nil) {
      mixes.append(["served-sqlite", "memory", "lmdb", "served-lmdb"])
    }
    if TestServers.postgresURL != nil { mixes.append(["postgres", "sqlite", "served-postgres"]) }
    try await Self.check(mixes, schedules: Self.schedules, partial: true)
  }

  static var schedules: Int { Int(environment["COFFER_SYNC_SCHEDULES"] ?? "") ?? 12 }

  /// Runs `schedules` random schedules, each on the next mix of backends, and fails with the
  /// seed and shrunk schedule of each (at most three) that did not converge.
  ///
  /// With `partial`, replica 1 keeps ``ConvergenceChecker/someItemsAllPins`` and, with four
  /// replicas or more, replica 2 keeps ``ConvergenceChecker/fewItemsNoLabels``.
  static func check(_ mixes: [[String]], schedules: Int, genesis: Bool = false, partial: Bool = false)
    async throws
  {
    let firstSeed = UInt64(Self.environment["COFFER_SYNC_SEED"] ?? "") ?? 46_000
    let postgres = TestServers.postgresURL
    var failures: [String] = []
    var total = ConvergenceChecker.Counts()
    let started = Date()
    for index in 0..<schedules {
      let seed = firstSeed &+ UInt64(index)
      let backends = mixes[index % mixes.count]
      var checker = ConvergenceChecker(backends: backends, postgresURL: postgres)
      checker.genesis = genesis
      if partial {
        checker.subscriptions[1] = ConvergenceChecker.someItemsAllPins
        if backends.count >= 4 { checker.subscriptions[2] = ConvergenceChecker.fewItemsNoLabels }
      }
      let replicas = backends.count
      let length = 20 + Int(seed % 61)
      let steps = ConvergenceChecker.schedule(
        seed: seed, replicas: replicas, length: length, bootstraps: genesis)
      var counts = ConvergenceChecker.Counts()
      let outcome = try await checker.run(seed: seed, replicas: replicas, steps: steps, counts: &counts)
      total.rows += counts.rows
      total.writes += counts.writes
      total.merged += counts.merged
      total.dropped += counts.dropped
      total.duplicated += counts.duplicated
      total.gaps += counts.gaps
      total.restarts += counts.restarts
      total.bootstraps += counts.bootstraps
      total.undecided += counts.undecided
      total.agreementOnly += counts.agreementOnly
      total.purged += counts.purged
      total.conflicts += counts.conflicts
      guard let problem = outcome else { continue }
      let shrunk = try await Self.shrink(steps, checker: checker, seed: seed, replicas: replicas)
      let failure = ConvergenceFailure(
        seed: seed, backends: backends, steps: shrunk.steps, problem: shrunk.problem ?? problem)
      print("CONVERGENCE FAILURE \(failure)")
      failures.append(failure.description)
      if failures.count >= 3 { break }
    }
    print(
      "sync-check: \(schedules) schedules on \(Set(mixes.joined()).sorted().joined(separator: ", ")) from seed \(firstSeed), \(failures.count) failed, "
        + String(format: "%.1f s", Date().timeIntervalSince(started)) + "; \(total.writes) writes, "
        + "\(total.merged) row states merged, \(total.dropped) messages dropped, \(total.duplicated) duplicated, "
        + "\(total.gaps) gaps, \(total.restarts) restarts, "
        + (genesis
          ? "genesis rows on 2 replicas, \(total.bootstraps) bootstraps done, \(total.undecided) rows deleted "
            + "with the implicit state left out of the reference comparison, \(total.agreementOnly) schedules "
            + "checked for agreement only, " : "")
        + (partial ? "replica 1 (and 2 of 4 or more) partial, " : "") + "\(total.rows) rows at the ends, "
        + "\(total.conflicts) conflicts recorded, \(total.purged) tombstones purged")
    #expect(failures.isEmpty, "\(failures.joined(separator: "\n\n"))")
  }

  /// Removes steps while the schedule still fails: halves, then quarters, down to single steps.
  static func shrink(_ steps: [SyncStep], checker: ConvergenceChecker, seed: UInt64, replicas: Int)
    async throws
    -> (steps: [SyncStep], problem: String?)
  {
    var current = steps
    var problem: String?
    var chunk = max(1, current.count / 2)
    var runs = 0
    while chunk >= 1 && runs < 200 {
      var start = 0
      var removed = false
      while start < current.count && runs < 200 {
        var candidate = current
        candidate.removeSubrange(start..<min(current.count, start + chunk))
        runs += 1
        if let found = try await checker.run(seed: seed, replicas: replicas, steps: candidate) {
          current = candidate
          problem = found
          removed = true
        } else {
          start += chunk
        }
      }
      if !removed { chunk /= 2 }
    }
    return (current, problem)
  }
}
