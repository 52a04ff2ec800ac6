import Coffer
import CofferMacros
import CofferStores
import Foundation
import Synchronization

/// An account the transfer workload moves money between.
@Storable
struct Account: Equatable {
  var id: Int64
  var balance: Int64
}

/// The transfer workload: tasks moving one unit from one account to another, picked at random
/// among `--accounts` (1,000 by default), each transfer one read-then-write transaction over two
/// rows. Coffer runs `store.transaction { tx in }` (two `tx.get`, two `tx.update`); raw libpq
/// runs what a C programmer writes for it: `BEGIN`, `SELECT … WHERE id IN ($1, $2) ORDER BY id
/// FOR UPDATE`, two `UPDATE`s, `COMMIT`, one connection per thread. Commits per second and
/// retries per commit for 1 and 8 tasks; every run checks that the balances still sum to what
/// they started at. Goal: Coffer postgres at least 0.5x raw libpq's commits per second.
///
/// `coffer-bench --transfers [--seconds S] [--accounts N] [--systems KEY,…] [--postgres-url URL]
/// [--output DIR] [--no-write]`
enum TransferBenchmark {
  static let flag = "--transfers"
  static let taskCounts = [1, 8]
  static let systemKeys = ["coffer-sqlite", "coffer-lmdb", "coffer-postgres", "raw-libpq"]
  static let startingBalance: Int64 = 1_000
  static let goal = 0.5

  struct Cell {
    var commits: Int
    var runs: Int
    var seconds: Double
    var commitsPerSecond: Double { Double(commits) / seconds }
    var retriesPerCommit: Double { commits == 0 ? 0 : Double(runs - commits) / Double(commits) }
  }

  static func run(_ arguments: [String]) async throws {
    var seconds = 3.0
    var accounts = 1_000
    var keys = systemKeys
    var output: String?
    var write = true
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--seconds":
        guard let text = iterator.next(), let value = Double(text), value > 0 else {
          throw UsageError(message: "--seconds needs a positive number")
        }
        seconds = value
      case "--accounts":
        guard let text = iterator.next(), let value = Int(text), value >= 2 else {
          throw UsageError(message: "--accounts needs a number of at least 2")
        }
        accounts = value
      case "--systems":
        guard let text = iterator.next() else { throw UsageError(message: "--systems needs a list") }
        keys = text.split(separator: ",").map(String.init)
      case "--postgres-url":
        guard let url = iterator.next() else { throw UsageError(message: "--postgres-url needs a URL") }
        try PostgresServer.use(url)
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "unknown argument \(argument)")
      }
    }
    if PostgresServer.absence != nil { keys.removeAll { ["coffer-postgres", "raw-libpq"].contains($0) } }
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("coffer-transfers-\(UUID())")
      .path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }

    var cells: [String: [Int: Cell]] = [:]
    var names: [String: String] = [:]
    for key in keys {
      let system = try makeSystem(key)
      names[key] = system.name
      for tasks in taskCounts {
        try await system.create(in: folder, accounts: accounts)
        let cell = try await measure(system, accounts: accounts, tasks: tasks, seconds: seconds)
        try await system.close()
        cells[key, default: [:]][tasks] = cell
        say(
          String(
            format: "%@, %d tasks: %.0f commits/s, %.3f retries per commit", system.name, tasks,
            cell.commitsPerSecond, cell.retriesPerCommit))
      }
    }

    var lines = [
      "# Transfers",
      "",
      "Written by `swift run -c release --package-path Benchmarks coffer-bench --transfers"
        + (seconds == 3 ? "" : " --seconds \(seconds)") + (accounts == 1_000 ? "" : " --accounts \(accounts)")
        + "`; every figure below was printed by that run.",
      "Machine: \(machineDescription()).",
      PostgresServer.url == nil ? "" : "PostgreSQL: \(PostgresServer.describe()).",
      "",
      "Each task loops for \(seconds) s moving one unit between two of \(accounts.formatted()) accounts picked at",
      "random: `store.transaction { tx in }` reading both with `tx.get` and writing both with `tx.update`",
      "on Coffer; `BEGIN`, `SELECT … FOR UPDATE` of both rows, two `UPDATE`s and `COMMIT` on raw libpq (one",
      "connection per thread). Every run checks that the balances still add up. Retries per commit: body",
      "runs that conflicted and ran again.",
      "",
      "commits per second (retries per commit)",
      "",
      "| system | " + taskCounts.map { "\($0) task\($0 == 1 ? "" : "s")" }.joined(separator: " | ") + " |",
      "|---|" + taskCounts.map { _ in "---:|" }.joined(),
    ]
    for key in keys {
      guard let row = cells[key] else { continue }
      let figures = taskCounts.map { tasks -> String in
        guard let cell = row[tasks] else { return "—" }
        return String(format: "%.0f (%.3f)", cell.commitsPerSecond, cell.retriesPerCommit)
      }
      lines.append("| \(names[key] ?? key) | " + figures.joined(separator: " | ") + " |")
    }
    lines.append("")
    if let coffer = cells["coffer-postgres"], let raw = cells["raw-libpq"] {
      lines.append("## Coffer postgres against raw libpq")
      lines.append("")
      lines.append(
        String(
          format: "Commits per second of Coffer's transaction divided by raw libpq's. Goal: at least %.1fx.",
          goal))
      lines.append("")
      lines.append("| tasks | ratio | goal |")
      lines.append("|---:|---:|---|")
      for tasks in taskCounts {
        guard let a = coffer[tasks], let b = raw[tasks], b.commits > 0 else { continue }
        let ratio = a.commitsPerSecond / b.commitsPerSecond
        lines.append(String(format: "| %d | %.2fx | %@ |", tasks, ratio, ratio >= goal ? "met" : "missed"))
      }
      lines.append("")
    }
    let text = lines.joined(separator: "\n")
    print(text)
    if write { try writeReport(text, named: "Transfers.md", to: output) }
  }

  /// Runs `tasks` tasks transferring for `seconds`, then checks the balances' sum.
  static func measure(_ system: any TransferSystem, accounts: Int, tasks: Int, seconds: Double) async throws
    -> Cell
  {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + .milliseconds(Int(seconds * 1000))
    let tallies = try await system.run(tasks: tasks, accounts: accounts, until: deadline)
    let elapsed = start.duration(to: clock.now)
    let total = try await system.total()
    guard total == Int64(accounts) * startingBalance else {
      throw BenchError("\(system.name): the balances sum to \(total) after the transfers")
    }
    return Cell(
      commits: tallies.reduce(0) { $0 + $1.0 }, runs: tallies.reduce(0) { $0 + $1.1 },
      seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18)
  }

  /// The next transfer's two accounts, different, picked at random among 1…`accounts`.
  static func pick(_ random: inout SplitMix64, accounts: Int) -> (from: Int64, to: Int64) {
    let from = Int64(random.below(accounts)) + 1
    var to = Int64(random.below(accounts - 1)) + 1
    if to >= from { to += 1 }
    return (from, to)
  }

  static func makeSystem(_ key: String) throws -> any TransferSystem {
    switch key {
    case "coffer-sqlite":
      return CofferTransfers(name: "Coffer sqlite", scheme: "sqlite", file: "transfers.sqlite")
    case "coffer-lmdb": return CofferTransfers(name: "Coffer lmdb", scheme: "lmdb", file: "transfers-lmdb")
    case "coffer-postgres":
      return CofferTransfers(name: "Coffer postgres", database: "coffer_bench_transfers")
    case "raw-libpq": return RawLibpqTransfers()
    default:
      throw UsageError(
        message: "unknown system \(key); the transfer workload has \(systemKeys.joined(separator: ", "))")
    }
  }
}

/// A system the transfer workload runs.
protocol TransferSystem: AnyObject, Sendable {
  var name: String { get }
  /// A new store in `folder` (or database) holding accounts 1…`accounts` at the starting balance.
  func create(in folder: String, accounts: Int) async throws
  /// Runs `tasks` tasks (or threads) at once, each transferring between accounts picked with
  /// ``TransferBenchmark/pick(_:accounts:)`` until `deadline`; returns each one's commits and
  /// body runs.
  func run(tasks: Int, accounts: Int, until deadline: ContinuousClock.Instant) async throws -> [(Int, Int)]
  /// The sum of every balance.
  func total() async throws -> Int64
  func close() async throws
}

/// A Coffer store: `store.transaction`.
final class CofferTransfers: TransferSystem, @unchecked Sendable {
  // `@unchecked Sendable`: `store` changes only in `create` and `close`, which the workload
  // calls while no task runs.
  let name: String
  private let location: BenchStoreLocation
  private var store: Store?

  init(name: String, scheme: String, file: String) {
    (self.name, self.location) = (name, BenchStoreLocation(scheme: scheme, file: file))
  }

  init(name: String, database: String) {
    (self.name, self.location) = (name, BenchStoreLocation(database: database))
  }

  func create(in folder: String, accounts: Int) async throws {
    try await close()
    let store = try await Store.open(url: try location.freshURL(in: folder), registry: .makeBuiltIn())
    try await store.insert(
      (1...Int64(accounts)).map { Account(id: $0, balance: TransferBenchmark.startingBalance) })
    self.store = store
  }

  func run(tasks: Int, accounts: Int, until deadline: ContinuousClock.Instant) async throws -> [(Int, Int)] {
    guard let store else { throw BenchError("\(name): no store is open") }
    let name = self.name
    return try await inTasks(tasks) { task in
      var random = SplitMix64(state: UInt64(task + 1) &* 0x9E37_79B9)
      var (commits, runs) = (0, 0)
      while ContinuousClock.now < deadline {
        let (from, to) = TransferBenchmark.pick(&random, accounts: accounts)
        try await store.transaction { tx in
          runs += 1
          guard var debit = try await tx.get(Account.self, id: from),
            var credit = try await tx.get(Account.self, id: to)
          else { throw BenchError("\(name): an account is missing") }
          debit.balance -= 1
          credit.balance += 1
          try tx.update(debit)
          try tx.update(credit)
        }
        commits += 1
      }
      return (commits, runs)
    }
  }

  func total() async throws -> Int64 {
    guard let store else { throw BenchError("\(name): no store is open") }
    return try await store.all(Account.self).reduce(0) { $0 + $1.balance }
  }

  func close() async throws {
    try await store?.close()
    store = nil
  }
}

/// libpq called directly: each thread has its own connection and runs the transfer as a C
/// program would, locking both rows in id order with `SELECT … FOR UPDATE`.
final class RawLibpqTransfers: TransferSystem, @unchecked Sendable {
  // `@unchecked Sendable`: `url` changes only in `create`, while no thread runs.
  let name = "raw libpq (FOR UPDATE)"
  private var url = ""

  func create(in folder: String, accounts: Int) async throws {
    let database = try PostgresDatabase("coffer_bench_raw_transfers")
    try database.recreate()
    url = database.url
    let connection = try PQConnection(url)
    try connection.execute(
      "CREATE TABLE account (id bigint PRIMARY KEY, balance bigint NOT NULL); "
        + "INSERT INTO account SELECT n, \(TransferBenchmark.startingBalance) FROM generate_series(1, \(accounts)) n"
    )
  }

  func run(tasks: Int, accounts: Int, until deadline: ContinuousClock.Instant) async throws -> [(Int, Int)] {
    let url = self.url
    // A thread per task: libpq blocks, and a blocking call must not hold the concurrency pool.
    let results = Mutex<[(Int, Int)]>([])
    let failure = Mutex<(any Error)?>(nil)
    let done = DispatchGroup()
    for task in 0..<tasks {
      done.enter()
      let thread = Thread {
        defer { done.leave() }
        do {
          let connection = try PQConnection(url)
          try connection.prepare(
            "lock", "SELECT id, balance FROM account WHERE id IN ($1, $2) ORDER BY id FOR UPDATE")
          try connection.prepare("move", "UPDATE account SET balance = balance + $2 WHERE id = $1")
          var random = SplitMix64(state: UInt64(task + 1) &* 0x9E37_79B9)
          var commits = 0
          while ContinuousClock.now < deadline {
            let (from, to) = TransferBenchmark.pick(&random, accounts: accounts)
            try connection.execute("BEGIN")
            var pair = PQParameters()
            pair.append { Self.appendInt64(from, to: &$0) }
            pair.append { Self.appendInt64(to, to: &$0) }
            guard try connection.run("lock", pair).count == 2 else {
              throw BenchError("raw libpq: an account is missing")
            }
            for (id, change) in [(from, Int64(-1)), (to, Int64(1))] {
              var parameters = PQParameters()
              parameters.append { Self.appendInt64(id, to: &$0) }
              parameters.append { Self.appendInt64(change, to: &$0) }
              _ = try connection.run("move", parameters)
            }
            try connection.execute("COMMIT")
            commits += 1
          }
          results.withLock { $0.append((commits, commits)) }
        } catch {
          failure.withLock { $0 = $0 ?? error }
        }
      }
      thread.start()
    }
    await withCheckedContinuation { continuation in
      done.notify(queue: .global()) { continuation.resume() }
    }
    if let error = failure.withLock({ $0 }) { throw error }
    return results.withLock { $0 }
  }

  private static func appendInt64(_ value: Int64, to bytes: inout [UInt8]) {
    withUnsafeBytes(of: value.bigEndian) { bytes.append(contentsOf: $0) }
  }

  func total() async throws -> Int64 {
    Int64(try PQConnection(url).scalar("SELECT sum(balance) FROM account")) ?? -1
  }

  func close() async throws {}
}
