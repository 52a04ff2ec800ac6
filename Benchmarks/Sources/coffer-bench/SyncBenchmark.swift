@_spi(Backend) import Coffer
import CofferServer
import CofferStores
import CofferSync
import CofferTools
import Foundation

/// Sync's figures (issue 46): the initial sync of a store into an empty one against
/// `StoreCopier` (what `coffer copy` runs) between the same two kinds of store, and the
/// `--follow` steady state on loopback.
///
/// Initial sync, for each pair: the source is filled with the workload's chat messages through
/// Coffer (not timed); `StoreCopier.run()` copies it into a new target, with verification (as
/// `coffer copy` does) and without; then a `Synchronizer` syncs it into another new target, timed
/// from the first `SyncReplica` call to the end of `sync()`, which includes turning sync on in the
/// source the first time and preparing the target. Both replicas use the implicit genesis stamp
/// (`SyncReplica.Genesis.implicit`): the source's rows get no sync state of their own, and the
/// empty target takes them by a bootstrap (pages of rows in one snapshot, then the feed).
/// The goal: sync's rate at least 70% of the copy's.
///
/// Follow: an SQLite store synced with another SQLite store served by `CofferServer` in this
/// process and reached through `coffer+http://127.0.0.1` by `Synchronizer.follow()`. A change is
/// committed every 20 ms, alternately on each side; its latency is the time from its commit
/// returning to its row arriving in the other side's change feed (both read the same clock).
/// The goal: p50 ≤ 100 ms, p99 ≤ 500 ms.
///
/// `coffer-bench --sync [--sync-rows N] [--sync-targets sqlite,postgres] [--follow-changes N]
/// [--skip-initial] [--skip-follow] [--postgres-url URL] [--output DIR] [--no-write]`
enum SyncBenchmark {
  static let flag = "--sync"
  static let rateGoal = 0.70
  static let p50Goal = 100.0
  static let p99Goal = 500.0
  static let warmUp = 10
  static let pause = Duration.milliseconds(20)

  /// What the command line asked for: the shared options (`--sync-targets` names the engines
  /// the SQLite source is synced and copied into; PostgreSQL joins them when a server is given)
  /// and this workload's own.
  struct Settings {
    var rows = 1_000_000
    var changes = 300
    var initial = true
    var follow = true
    var shared: WorkloadArguments

    var pairs: [String] { shared.engines.map { "sqlite-\($0)" } }

    init(_ arguments: [String]) throws {
      var rows = 1_000_000
      var changes = 300
      var initial = true
      var follow = true
      shared = try WorkloadArguments(
        arguments, flag: SyncBenchmark.flag, enginesOption: "--sync-targets", repetitions: 1,
        engines: ["sqlite"]
      ) { argument, number in
        switch argument {
        case "--sync-rows": rows = try number()
        case "--follow-changes": changes = max(SyncBenchmark.warmUp + 10, try number())
        case "--skip-initial": initial = false
        case "--skip-follow": follow = false
        default: return false
        }
        return true
      }
      (self.rows, self.changes, self.initial, self.follow) = (rows, changes, initial, follow)
    }
  }

  /// One pair's initial sync beside its copies.
  struct Initial {
    var pair: String
    var fill: Double
    var copyVerified: Double
    var copy: Double
    /// Seconds the source's first `SyncReplica` call took: the feed turned on, the genesis stamp recorded.
    var stamp: Double
    /// Seconds of the target's first call and `sync()`.
    var transfer: Double
    var sync: Double { stamp + transfer }
  }

  static func run(_ arguments: [String]) async throws {
    let settings = try Settings(arguments)
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    var initials: [Initial] = []
    if let absence = PostgresServer.absence { say("sqlite-postgres: left out: \(absence)") }
    if settings.initial {
      for pair in settings.pairs {
        initials.append(try await initial(pair, rows: settings.rows))
      }
    }
    var latencies: [Double] = []
    if settings.follow { latencies = try await follow(changes: settings.changes) }
    let text = report(
      initials, latencies: latencies, settings: settings, command: command,
      load: load.finish()
    ).joined(separator: "\n")
    print(text)
    if settings.shared.write { try writeReport(text, named: "Sync.md", to: settings.shared.output) }
  }

  // MARK: - Initial sync

  static func initial(_ pair: String, rows: Int) async throws -> Initial {
    let parts = pair.split(separator: "-").map(String.init)
    guard parts.count == 2, parts[0] == "sqlite" else {
      throw UsageError(message: "--sync-pairs: \(pair) is not sqlite-TARGET")
    }
    let folder = try ScratchFolder("sync-\(pair)")
    defer { folder.remove() }
    let source = folder.file("source.sqlite")
    let fill = try await CopyBenchmark.seconds {
      let store = try await Store.open(url: "sqlite://" + source, registry: .makeBuiltIn())
      try await store.prepare([ChatMessage.self])
      try await store.insert(Workload.messages(rows))
      try await store.close()
    }
    say(
      "\(pair): \(rows.formatted()) messages filled through Coffer in \(CopyBenchmark.duration(fill)) (not timed)"
    )
    var copies: [Double] = []
    for verify in [true, false] {
      let target = try folder.storeURL(parts[1], named: "copy-\(verify)", database: "coffer_bench_sync_copy")
      let stores = try await open("sqlite://" + source, target)
      var copier = StoreCopier(from: stores.0, to: stores.1)
      copier.verify = verify
      let seconds = try await CopyBenchmark.seconds { _ = try await copier.run() }
      try await check(stores.1, rows: rows, what: "the copy")
      try await stores.0.close()
      try await stores.1.close()
      say(
        "\(pair): copy\(verify ? " (verified)" : "") \(CopyBenchmark.duration(seconds)), \(rate(rows, seconds)) rows/s"
      )
      copies.append(seconds)
    }
    // Sync last: its first call writes the source's sync records.
    let target = try folder.storeURL(parts[1], named: "sync", database: "coffer_bench_sync_target")
    let stores = try await open("sqlite://" + source, target)
    let local = SyncReplica(store: stores.0, genesis: .implicit)
    let remote = SyncReplica(store: stores.1, genesis: .implicit)
    let stamp = try await CopyBenchmark.seconds { _ = try await local.replicaID() }
    var report: Synchronizer.Report?
    let transfer = try await CopyBenchmark.seconds {
      _ = try await remote.replicaID()
      report = try await Synchronizer(local: local, remote: remote).sync()
    }
    guard let pushed = report?.pushedRows, pushed == rows else {
      throw BenchError("\(pair): the sync changed \(report?.pushedRows ?? 0) rows of \(rows) on the target")
    }
    try await check(stores.1, rows: rows, what: "the sync")
    try await stores.0.close()
    try await stores.1.close()
    let result = Initial(
      pair: pair, fill: fill, copyVerified: copies[0], copy: copies[1], stamp: stamp, transfer: transfer)
    say(
      "\(pair): sync \(CopyBenchmark.duration(result.sync)) (turning sync on in the source \(CopyBenchmark.duration(stamp)), "
        + "transfer \(CopyBenchmark.duration(transfer))), \(rate(rows, result.sync)) rows/s")
    return result
  }

  static func open(_ source: String, _ target: String) async throws -> (Store, Store) {
    (
      try await Store.open(url: source, registry: .makeBuiltIn()),
      try await Store.open(url: target, registry: .makeBuiltIn())
    )
  }

  static func check(_ store: Store, rows: Int, what: String) async throws {
    let count = try await store.countRows(Query(entity: "ChatMessage"))
    guard count == rows else { throw BenchError("\(what) left \(count) rows of \(rows) in the target") }
  }

  static func rate(_ rows: Int, _ seconds: Double) -> String { CopyBenchmark.rate(Double(rows) / seconds) }

  // MARK: - Follow

  /// Latencies in milliseconds of `changes` changes (the first ``warmUp`` left out), alternately
  /// on the local store and on the served one.
  static func follow(changes: Int) async throws -> [Double] {
    let folder = try ScratchFolder("sync-follow")
    defer { folder.remove() }
    let schema = ChangesBenchmark.schema
    let local = try await Store.open(url: "sqlite://" + folder.file("local.sqlite"), registry: .makeBuiltIn())
    let served = try await Store.open(
      url: "sqlite://" + folder.file("served.sqlite"), registry: .makeBuiltIn())
    for store in [local, served] { try await store.prepare(schemas: [schema]) }
    let (ports, portSink) = AsyncStream.makeStream(of: Int.self)
    let server = CofferServer(
      store: served,
      configuration: .init(host: "127.0.0.1", port: 0) { port in
        portSink.yield(port)
        portSink.finish()
      })
    let serving = Task { try await server.run() }
    var port = 0
    for await found in ports { port = found }
    let client = try await Store.open(url: "coffer+http://127.0.0.1:\(port)", registry: .makeBuiltIn())
    let sync = Synchronizer(local: SyncReplica(store: local), remote: SyncReplica(store: client))
    try await sync.sync()
    let arrivals = ChangesWakeBenchmark.LockedArrivals()
    var watchers: [Task<Void, any Error>] = []
    // Even ids are written locally and arrive in the served store; odd ids the other way.
    for (store, parity) in [(served, Int64(0)), (local, Int64(1))] {
      let start = try await store.lastChangePosition()
      watchers.append(
        Task {
          for try await batch in store.changes(after: start, follow: true) {
            let arrived = ChangesWakeBenchmark.now()
            for change in batch.changes where change.entity == schema.name {
              if case .int(let id) = change.id, id % 2 == parity { arrivals.add(id, arrived) }
            }
          }
        })
    }
    let following = Task { try await sync.follow() }
    var committed: [Int64: Int64] = [:]
    for id in 0..<Int64(changes) {
      try await Task.sleep(for: pause)
      try await (id % 2 == 0 ? local : served).apply(
        ChangeSet([.insert(entity: schema.name, row: ChangesBenchmark.row(id))]))
      committed[id] = ChangesWakeBenchmark.now()
    }
    let deadline = ContinuousClock.now + .seconds(60)
    while arrivals.count < changes, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    following.cancel()
    for watcher in watchers { watcher.cancel() }
    _ = try? await following.value
    for watcher in watchers { _ = try? await watcher.value }
    try await client.close()
    serving.cancel()
    _ = try? await serving.value
    try await local.close()
    try await served.close()
    let seen = arrivals.all
    guard seen.count == changes else {
      throw BenchError("follow: \(seen.count) of \(changes) changes arrived within 60 s")
    }
    let latencies = (Int64(warmUp)..<Int64(changes)).compactMap { id -> Double? in
      guard let sent = committed[id], let arrived = seen[id] else { return nil }
      return Double(arrived - sent) / 1000
    }
    say(
      String(
        format: "follow: %d changes, p50 %.1f ms, p99 %.1f ms, max %.1f ms", latencies.count,
        percentile(latencies, 0.5), percentile(latencies, 0.99), latencies.max() ?? .nan))
    return latencies
  }

  static func percentile(_ values: [Double], _ fraction: Double) -> Double {
    ChangesWakeBenchmark.Figure(engine: "", latencies: values, load: nil).percentile(fraction)
  }

  // MARK: - The report

  static func report(
    _ initials: [Initial], latencies: [Double], settings: Settings, command: String,
    load: MachineLoad.Result
  ) -> [String] {
    var lines = [
      "# Sync",
      "",
      "Written by `\(command)`; every figure below was printed by that run.",
      "Machine: \(machineDescription()). \(load.sentence)",
      "",
      CopyBenchmark.coreState(),
      "",
    ]
    if !initials.isEmpty {
      let rows = settings.rows
      lines += [
        "## Initial sync against `coffer copy`",
        "",
        "\(rows.formatted()) chat messages in an SQLite store (filled through Coffer, not timed), copied by",
        "`StoreCopier.run()` into a new store with verification (what `coffer copy` does) and without, then",
        "synced by `Synchronizer.sync()` into another new store, both replicas with the implicit genesis",
        "stamp (`SyncReplica(store:genesis: .implicit)`): the empty target takes the source's rows by a",
        "bootstrap, pages of rows read in one snapshot of the source, then follows its feed. The sync's time",
        "runs from the first `SyncReplica` call on the source — which turns its change feed on and records",
        "the genesis stamp, once in the life of a store — to the end of `sync()`. Each run is measured",
        "once. Goal: sync's rate ≥ \(Int(rateGoal * 100))% of the copy's.",
        "",
        "| pair | copy, verified | copy, not verified | sync | of which turning sync on in the source | rows/s, sync "
          + "| ÷ copy verified | ÷ copy not verified | goal |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|",
      ]
      for result in initials {
        let ratioVerified = result.copyVerified / result.sync
        let ratio = result.copy / result.sync
        lines.append(
          "| \(result.pair) | \(CopyBenchmark.duration(result.copyVerified)) | \(CopyBenchmark.duration(result.copy)) "
            + "| \(CopyBenchmark.duration(result.sync)) | \(CopyBenchmark.duration(result.stamp)) "
            + "| \(rate(rows, result.sync)) | \(String(format: "%.2f", ratioVerified)) "
            + "| \(String(format: "%.2f", ratio)) | \(CopyBenchmark.verdict(ratioVerified >= rateGoal)) |")
      }
      lines.append("")
    }
    if let absence = PostgresServer.absence { lines += ["PostgreSQL left out: \(absence).", ""] }
    if !latencies.isEmpty {
      let p50 = percentile(latencies, 0.5)
      let p99 = percentile(latencies, 0.99)
      lines += [
        "## `--follow` on loopback",
        "",
        "An SQLite store and an SQLite store served by `CofferServer` in the same process, reached through",
        "`coffer+http://127.0.0.1`, kept in step by `Synchronizer.follow()`. One one-row commit every",
        "\(pause.components.seconds * 1000 + pause.components.attoseconds / 1_000_000_000_000_000) ms, alternately on each side;",
        "latency from the commit returning to the row arriving in the other side's change feed, the first",
        "\(warmUp) left out.",
        "",
        "| changes | p50 | p99 | max | goal p50 ≤ \(Int(p50Goal)) ms, p99 ≤ \(Int(p99Goal)) ms |",
        "|---:|---:|---:|---:|---|",
        String(
          format: "| %d | %.1f ms | %.1f ms | %.1f ms | %@ |", latencies.count, p50, p99,
          latencies.max() ?? .nan,
          CopyBenchmark.verdict(p50 <= p50Goal && p99 <= p99Goal)),
        "",
      ]
    }
    return lines + design
  }

  /// How the initial sync measured above works (the design; no figures).
  static let design = [
    "## How an initial sync works: the genesis stamp and the bootstrap",
    "",
    "Before, turning sync on stamped every row of the source (a sync state written beside each row, and",
    "a feed entry for it), and the new replica merged those states a message at a time, reading the",
    "records and rows each merge touched: per-row work on both sides, several times a copy's. Now a",
    "replica made with `SyncReplica.Genesis.implicit`:",
    "",
    "1. **Genesis stamp.** The first time it takes part in sync it takes one clock reading and records it",
    "   with its feed position (one small batch). Every row stored without a sync state has the implicit",
    "   state \"each field's stored value, set at the genesis stamp\". Merges, merge plans and snapshots",
    "   read that state where a record is missing; stamping gives a row a state of its own when the feed",
    "   names it (its first change stamps every field: its old values are gone; a first change that",
    "   deletes it leaves a tombstone without values), and a row held back, nullified or deleted by a",
    "   merge gets its state written. These two outcomes are why the genesis stamp is a choice, not",
    "   the default (see the article).",
    "2. **Bootstrap.** A peer that has merged nothing from it cannot find those rows in its feed, so",
    "   `Synchronizer` runs a bootstrap: the source notes its feed position, then reads each entity in id",
    "   order inside one snapshot (page by page through `coffer+http://`), rows without a state in pages of",
    "   `bootstrapPageSize` (the next page read while the target writes this one), then the entity's",
    "   states. An empty target inserts each page of rows in one batch with no state written and takes the",
    "   source's genesis stamp; the batch expects no state of the entity and no stored row, so anything",
    "   the app or another merge wrote meanwhile sends the page through the ordinary merge. The last page",
    "   records the position the bootstrap started at, and the feed follows from there (batches committed",
    "   while it read come again; merging them twice changes nothing).",
    "3. **Afterwards** the target's stamping skips its own bootstrap batches (it knows which they are),",
    "   the target relays the bootstrapped rows through its feed to peers that merged from it before,",
    "   and two replicas holding every row of the same genesis stamp exchange only states when they",
    "   first meet — so the pull back to the source here sends no rows.",
    "",
    "The convergence checker runs schedules with rows on two replicas before sync and bootstraps cut off",
    "halfway; the article `Sync` in the CofferSync documentation has the whole design.",
    "",
  ]
}
