import Coffer
import CofferMacros
import CofferStores
import Foundation
import GRDB
import Synchronization

/// A counter the contention workload increments.
@Storable
struct Counter: Equatable {
  var id: Int64
  var count: Int64
}

/// The contention workload: 1, 2, 4 and 8 tasks incrementing counters with read-then-write
/// transactions, on one hot row and on rows picked at random among 10,000; commits per second
/// and retries per commit for each system. Also the cost of a transaction against a plain
/// batch with the same write, on one task, uncontended.
///
/// `coffer-bench --contention [--seconds S] [--systems KEY,…] [--postgres-url URL] [--output DIR]
/// [--no-write] [--uncontended-only]`; `--uncontended-only` measures only the transaction
/// against the plain batch, for profiling.
enum ContentionBenchmark {
  static let flag = "--contention"
  static let taskCounts = [1, 2, 4, 8]
  static let spreadRows = 10_000
  static let systemKeys = [
    "coffer-memory", "coffer-plist", "coffer-sqlite", "grdb", "coffer-lmdb", "coffer-postgres",
  ]

  enum Mode: String, CaseIterable {
    case hot = "one hot row"
    case spread = "10,000 rows at random"
  }

  struct Cell {
    var commits: Int
    var runs: Int
    var seconds: Double
    var commitsPerSecond: Double { Double(commits) / seconds }
    var retriesPerCommit: Double { commits == 0 ? 0 : Double(runs - commits) / Double(commits) }
  }

  static func run(_ arguments: [String]) async throws {
    var seconds = 2.0
    var keys = systemKeys
    var output: String?
    var write = true
    var onlyUncontended = false
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--seconds":
        guard let text = iterator.next(), let value = Double(text), value > 0 else {
          throw UsageError(message: "--seconds needs a positive number")
        }
        seconds = value
      case "--systems":
        guard let text = iterator.next() else { throw UsageError(message: "--systems needs a list") }
        keys = text.split(separator: ",").map(String.init)
      case "--postgres-url":
        guard let url = iterator.next() else { throw UsageError(message: "--postgres-url needs a URL") }
        try PostgresServer.use(url)
      case "--output": output = iterator.next()
      case "--no-write": write = false
      case "--uncontended-only": onlyUncontended = true
      default: throw UsageError(message: "unknown argument \(argument)")
      }
    }
    if PostgresServer.absence != nil { keys.removeAll { $0 == "coffer-postgres" } }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-contention-\(UUID())")
      .path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }

    var cells: [String: [Mode: [Int: Cell]]] = [:]
    var names: [String: String] = [:]
    var uncontended: [(name: String, plain: Double, transaction: Double, general: Double?)] = []
    for key in keys {
      let system = try makeSystem(key)
      names[key] = system.name
      for mode in Mode.allCases where !onlyUncontended {
        for tasks in taskCounts {
          try await system.create(in: folder, rows: mode == .hot ? 1 : spreadRows)
          let cell = try await measure(system, mode: mode, tasks: tasks, seconds: seconds)
          try await system.close()
          cells[key, default: [:]][mode, default: [:]][tasks] = cell
          say(
            String(
              format: "%@, %@, %d tasks: %.0f commits/s, %.3f retries per commit", system.name, mode.rawValue,
              tasks, cell.commitsPerSecond, cell.retriesPerCommit))
        }
      }
      if system.hasPlainWrite {
        try await system.create(in: folder, rows: spreadRows)
        let plain = try await perCall(seconds: seconds) { random in
          let value = random.next()
          try await system.plainWrite(Int64(value % UInt64(spreadRows)) + 1, count: Int64(value >> 40))
        }
        let transaction = try await perCall(seconds: seconds) { random in
          _ = try await system.increment(Int64(random.next() % UInt64(spreadRows)) + 1)
        }
        var general: Double?
        if let coffer = system as? CofferContention {
          general = try await perCall(seconds: seconds) { random in
            try await coffer.incrementInTransaction(Int64(random.next() % UInt64(spreadRows)) + 1)
          }
        }
        try await system.close()
        uncontended.append((system.name, plain, transaction, general))
        say(
          String(
            format: "%@ uncontended: plain batch %.1f µs, modify %.1f µs, %.2fx", system.name,
            plain * 1e6,
            transaction * 1e6, transaction / plain)
            + (general.map { String(format: "; transaction %.1f µs, %.2fx", $0 * 1e6, $0 / plain) } ?? ""))
      }
    }

    var lines = [
      "# Contention",
      "",
      "Written by `swift run -c release --package-path Benchmarks coffer-bench --contention"
        + (seconds == 2 ? "" : " --seconds \(seconds)") + "`; every figure below was printed by that run.",
      "Machine: \(machineDescription()).",
      "",
      "Each task loops for \(seconds) s: read a counter, add one, write it back — `store.modify` on",
      "Coffer, `DatabasePool.write { }` fetching and updating a record on GRDB — on one hot row,",
      "or on a row picked at random among \(spreadRows.formatted()). Every run checks that the counters",
      "sum to the number of commits. Retries per commit: body runs that conflicted and ran again.",
      "",
    ]
    for mode in Mode.allCases {
      lines.append("## \(mode.rawValue.prefix(1).uppercased() + mode.rawValue.dropFirst())")
      lines.append("")
      lines.append("commits per second (retries per commit)")
      lines.append("")
      lines.append(
        "| system | " + taskCounts.map { "\($0) task\($0 == 1 ? "" : "s")" }.joined(separator: " | ") + " |")
      lines.append("|---|" + taskCounts.map { _ in "---:|" }.joined())
      for key in keys {
        guard let row = cells[key]?[mode] else { continue }
        let figures = taskCounts.map { tasks -> String in
          guard let cell = row[tasks] else { return "—" }
          return String(format: "%.0f (%.3f)", cell.commitsPerSecond, cell.retriesPerCommit)
        }
        lines.append("| \(names[key] ?? key) | " + figures.joined(separator: " | ") + " |")
      }
      lines.append("")
    }
    if let coffer = cells["coffer-sqlite"], let grdb = cells["grdb"] {
      lines.append("## Coffer SQLite against GRDB")
      lines.append("")
      lines.append(
        "Commits per second of Coffer's `modify` divided by GRDB's `write { }` (above 1: Coffer is faster).")
      lines.append("")
      lines.append(
        "| rows | " + taskCounts.map { "\($0) task\($0 == 1 ? "" : "s")" }.joined(separator: " | ") + " |")
      lines.append("|---|" + taskCounts.map { _ in "---:|" }.joined())
      for mode in Mode.allCases {
        let ratios = taskCounts.map { tasks -> String in
          guard let a = coffer[mode]?[tasks], let b = grdb[mode]?[tasks], b.commits > 0 else { return "—" }
          return String(format: "%.2fx", a.commitsPerSecond / b.commitsPerSecond)
        }
        lines.append("| \(mode.rawValue) | " + ratios.joined(separator: " | ") + " |")
      }
      lines.append("")
    }
    if !uncontended.isEmpty {
      lines.append("## A transaction against a plain batch, uncontended")
      lines.append("")
      lines.append(
        "One task; mean time per call on rows picked at random: `store.update` (a plain batch) against")
      lines.append(
        "`store.modify` (read, then the same update with a precondition; in memory, both in one step under"
      )
      lines.append(
        "the store's lock; on PostgreSQL, the update is one statement that checks the row is as read), and")
      lines.append(
        "`store.transaction { tx in … }` whose body reads the row with `tx.get` and writes it back with")
      lines.append(
        "`tx.update` (the general path: what was read becomes the precondition of one batch). Goal: each")
      lines.append("at most 1.3x the plain batch.")
      lines.append("")
      lines.append("| system | plain batch | modify | ratio | transaction | ratio |")
      lines.append("|---|---:|---:|---:|---:|---:|")
      for entry in uncontended {
        let general =
          entry.general.map { String(format: "%.1f µs | %.2fx", $0 * 1e6, $0 / entry.plain) } ?? "— | —"
        lines.append(
          String(
            format: "| %@ | %.1f µs | %.1f µs | %.2fx | ", entry.name, entry.plain * 1e6,
            entry.transaction * 1e6,
            entry.transaction / entry.plain) + general + " |")
      }
      lines.append("")
    }
    var observed: [(name: String, latency: ObservationLatency)] = []
    for key in keys
    where !onlyUncontended && ["coffer-sqlite", "coffer-lmdb", "coffer-postgres"].contains(key) {
      guard let system = try makeSystem(key) as? CofferContention else { continue }
      let latency = try await system.observationLatency(in: folder)
      observed.append((system.name, latency))
      say(
        String(
          format:
            "%@: a commit through another handle observed after %.1f ms median, %.1f ms worst; idle observer %.2f%% of a core",
          system.name, latency.median * 1e3, latency.worst * 1e3, latency.idleCPU * 100))
    }
    if !observed.isEmpty {
      lines.append("## Observing commits made through another handle")
      lines.append("")
      lines.append(
        "A query observed through one `Store` while a second `Store` on the same file commits an update")
      lines.append(
        "every 50 to 130 ms (at random), \(ObservationLatency.commits) times: the time from the commit's return to the"
      )
      lines.append("observer's new result; and the CPU the process used over 5 s with the observer idle.")
      lines.append("")
      lines.append("| system | median | worst | idle observer |")
      lines.append("|---|---:|---:|---:|")
      for entry in observed {
        lines.append(
          String(
            format: "| %@ | %.1f ms | %.1f ms | %.2f%% of a core |", entry.name, entry.latency.median * 1e3,
            entry.latency.worst * 1e3, entry.latency.idleCPU * 100))
      }
      lines.append("")
    }
    let text = lines.joined(separator: "\n")
    print(text)
    if write { try writeReport(text, named: "Contention.md", to: output) }
  }

  /// Runs `tasks` tasks incrementing counters for `seconds`, then checks the counters' sum.
  static func measure(_ system: any ContentionSystem, mode: Mode, tasks: Int, seconds: Double) async throws
    -> Cell
  {
    let rows = mode == .hot ? 1 : spreadRows
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    let tallies = try await inTasks(tasks) { task in
      var random = SplitMix64(state: UInt64(task + 1) &* 0x9E37_79B9)
      var commits = 0
      var runs = 0
      while clock.now < deadline {
        let id = rows == 1 ? 1 : Int64(random.next() % UInt64(rows)) + 1
        runs += try await system.increment(id)
        commits += 1
      }
      return (commits, runs)
    }
    let elapsed = start.duration(to: clock.now)
    let commits = tallies.reduce(0) { $0 + $1.0 }
    let total = try await system.total()
    guard total == Int64(commits) else {
      throw BenchError("\(system.name): the counters sum to \(total) after \(commits) commits")
    }
    return Cell(
      commits: commits, runs: tallies.reduce(0) { $0 + $1.1 },
      seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
  }

  /// The mean time of `body` called in a loop for `seconds` (after a short warm-up).
  static func perCall(seconds: Double, _ body: (inout SplitMix64) async throws -> Void) async throws -> Double
  {
    var random = SplitMix64(state: 7)
    for _ in 0..<50 { try await body(&random) }
    let clock = ContinuousClock()
    let start = clock.now
    var calls = 0
    while start.duration(to: clock.now) < .milliseconds(Int(seconds * 1000)) {
      try await body(&random)
      calls += 1
    }
    let elapsed = start.duration(to: clock.now)
    return (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
      / Double(calls)
  }

  static func makeSystem(_ key: String) throws -> any ContentionSystem {
    switch key {
    case "coffer-memory": return CofferContention(name: "Coffer memory", scheme: "memory", file: "")
    case "coffer-plist":
      return CofferContention(name: "Coffer plist", scheme: "plist", file: "contention.plist")
    case "coffer-sqlite":
      return CofferContention(name: "Coffer sqlite", scheme: "sqlite", file: "contention.sqlite")
    case "coffer-lmdb": return CofferContention(name: "Coffer lmdb", scheme: "lmdb", file: "contention-lmdb")
    case "coffer-postgres":
      return CofferContention(name: "Coffer postgres", database: "coffer_bench_contention")
    case "grdb": return GRDBContention()
    default:
      throw UsageError(
        message: "unknown system \(key); the contention workload has \(systemKeys.joined(separator: ", "))")
    }
  }
}

/// A system the contention workload runs: it keeps counters and increments one by reading it
/// and writing it back in one transaction.
protocol ContentionSystem: AnyObject, Sendable {
  var name: String { get }
  /// Whether it has a plain write to compare its transaction with.
  var hasPlainWrite: Bool { get }
  /// A new store in `folder` holding counters 1…`rows`, each at 0.
  func create(in folder: String, rows: Int) async throws
  /// Adds one to a counter; returns how many times the transaction's body ran.
  func increment(_ id: Int64) async throws -> Int
  /// Writes a counter with no read and no precondition.
  func plainWrite(_ id: Int64, count: Int64) async throws
  /// The sum of every counter.
  func total() async throws -> Int64
  func close() async throws
}

/// A Coffer store: `store.modify`.
final class CofferContention: ContentionSystem, @unchecked Sendable {
  // `@unchecked Sendable`: `store` and `database` change only in `create` and `close`, which the
  // workload calls while no task runs.
  let name: String
  let hasPlainWrite = true
  private let location: BenchStoreLocation
  private var store: Store?
  /// The URL of the store `create` made last.
  private(set) var url = ""

  init(name: String, scheme: String, file: String) {
    (self.name, self.location) = (name, BenchStoreLocation(scheme: scheme, file: file))
  }

  init(name: String, database: String) {
    (self.name, self.location) = (name, BenchStoreLocation(database: database))
  }

  var open: Store {
    get throws {
      guard let store else { throw BenchError("\(name): no store is open") }
      return store
    }
  }

  func create(in folder: String, rows: Int) async throws {
    try await close()
    let url = try location.freshURL(in: folder)
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.insert((1...rows).map { Counter(id: Int64($0), count: 0) })
    self.store = store
    self.url = url
  }

  func increment(_ id: Int64) async throws -> Int {
    var runs = 0
    try await open.modify(Counter.self, id: id) { counter in
      runs += 1
      counter.count += 1
    }
    return runs
  }

  /// Adds one to a counter with `store.transaction`: the body reads it and writes it back.
  func incrementInTransaction(_ id: Int64) async throws {
    try await open.transaction { tx in
      guard var counter = try await tx.get(Counter.self, id: id) else {
        throw BenchError("\(self.name): counter \(id) is missing")
      }
      counter.count += 1
      try tx.update(counter)
    }
  }

  func plainWrite(_ id: Int64, count: Int64) async throws {
    try await open.update(Counter(id: id, count: count))
  }

  func total() async throws -> Int64 {
    try await open.all(Counter.self).reduce(0) { $0 + $1.count }
  }

  func close() async throws {
    try await store?.close()
    store = nil
  }
}

/// How quickly an observer sees a commit made through another handle, and what it costs idle.
struct ObservationLatency {
  static let commits = 100
  var median: Double
  var worst: Double
  var idleCPU: Double
}

extension CofferContention {
  /// Observes counter 1 through one store while another store on the same file updates it.
  func observationLatency(in folder: String) async throws -> ObservationLatency {
    try await create(in: folder, rows: 1)
    defer { Task { try? await close() } }
    let writer = try await Store.open(url: url, registry: .makeBuiltIn())
    let observer = try open
    let seen = Mutex<(version: Int64, at: ContinuousClock.Instant)>((0, .now))
    let reader = Task {
      for try await values in observer.query(Counter.self).observe() {
        let version = values.first?.count ?? -1
        seen.withLock { $0 = (version, .now) }
      }
    }
    defer { reader.cancel() }
    try await Task.sleep(for: .milliseconds(200))
    let idleStart = cpuSeconds()
    try await Task.sleep(for: .seconds(5))
    let idleCPU = (cpuSeconds() - idleStart) / 5
    var latencies: [Double] = []
    for version in 1...Int64(ObservationLatency.commits) {
      try await writer.update(Counter(id: 1, count: version))
      let committed = ContinuousClock.now
      while seen.withLock({ $0.version }) < version {
        if committed.duration(to: .now) > .seconds(5) {
          throw BenchError("\(name): no update observed in 5 s")
        }
        try await Task.sleep(for: .microseconds(200))
      }
      let at = seen.withLock { $0.at }
      let elapsed = committed.duration(to: at)
      latencies.append(
        max(0, Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18))
      // A random pause, so that commits do not fall in step with the observer's polling.
      try await Task.sleep(for: .milliseconds(Int.random(in: 50...130)))
    }
    try await writer.close()
    latencies.sort()
    return ObservationLatency(
      median: latencies[latencies.count / 2], worst: latencies.last ?? 0, idleCPU: idleCPU)
  }
}

/// The CPU time the process has used, user and system, in seconds.
func cpuSeconds() -> Double {
  var usage = rusage()
  getrusage(RUSAGE_SELF.rawValue, &usage)
  return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
    + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

/// GRDB: a `DatabasePool` (WAL) with the synchronous setting every SQLite system shares; the
/// increment is `write { }` fetching the record and updating it.
final class GRDBContention: ContentionSystem, @unchecked Sendable {
  // `@unchecked Sendable`: `pool` changes only in `create` and `close`.
  let name = "GRDB write { }"
  let hasPlainWrite = false
  private var pool: DatabasePool?

  struct Record: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "counter"
    var id: Int64
    var count: Int64
  }

  private var open: DatabasePool {
    get throws {
      guard let pool else { throw BenchError("GRDB: no database is open") }
      return pool
    }
  }

  func create(in folder: String, rows: Int) async throws {
    try await close()
    let path = folder + "/contention-grdb.sqlite"
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    let pool = try DatabasePool(path: path)
    try await pool.writeWithoutTransaction { db in
      try db.execute(sql: "PRAGMA synchronous = \(SQLiteSettings.synchronous)")
    }
    try await pool.write { db in
      try db.create(table: Record.databaseTableName) { table in
        table.primaryKey("id", .integer)
        table.column("count", .integer).notNull()
      }
      for id in 1...rows { try Record(id: Int64(id), count: 0).insert(db) }
    }
    self.pool = pool
  }

  func increment(_ id: Int64) async throws -> Int {
    try await open.write { db in
      guard var record = try Record.fetchOne(db, key: id) else { throw BenchError("GRDB: no counter \(id)") }
      record.count += 1
      try record.update(db)
    }
    return 1
  }

  func plainWrite(_ id: Int64, count: Int64) async throws {}

  func total() async throws -> Int64 {
    try await open.read { db in try Int64.fetchOne(db, sql: "SELECT sum(count) FROM counter") ?? 0 }
  }

  func close() async throws {
    try pool?.close()
    pool = nil
  }
}
