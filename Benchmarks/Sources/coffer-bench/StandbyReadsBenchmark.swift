@_spi(Backend) import Coffer
import CofferStores
import Foundation
import RawPostgres

/// Point gets from 8 tasks with reads spread over 1, 2 and 3 servers (issue 47): a primary
/// (`--postgres-url`) and its streaming standbys (`--standby-hosts HOST:PORT,HOST:PORT`, e.g.
/// made by `scripts/test-postgres-standby start --async`). One store per configuration —
/// `reads=primary` on the primary alone, `reads=any` over the primary and the first standby, and
/// over all three — each getting random ids of `--standby-read-rows` rows (default 10,000) for
/// `--standby-read-seconds` (default 3) after a second of warm-up, the configurations taking
/// turns `--repetitions` times (default 3); each figure is the median throughput. The share of
/// each server is read from its `pg_stat_database` transaction count.
///
/// `coffer-bench --standby-reads --postgres-url URL --standby-hosts HOST:PORT,HOST:PORT
/// [--standby-read-rows N] [--standby-read-seconds N] [--repetitions N] [--output DIR] [--no-write]`
enum StandbyReadsBenchmark {
  static let flag = "--standby-reads"
  static let tasks = 8

  static let schema = try? EntitySchema(
    name: "Item", fields: [Field("id", .int), Field("title", .string), Field("value", .int)], idField: "id")

  static func row(_ id: Int64) -> Row { Row([.int(id), .string("item \(id)"), .int(id &* 7)]) }

  /// One configuration: its name and the servers its reads may go to.
  struct Setup {
    var name: String
    var hosts: [String]
    var reads: String
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 10_000
    var seconds = 3
    var standbys: [String] = []
    var rest: [String] = []
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      if argument == "--standby-hosts" {
        guard let text = iterator.next() else {
          throw UsageError(message: "--standby-hosts needs HOST:PORT,HOST:PORT")
        }
        standbys = text.split(separator: ",").map(String.init)
      } else {
        rest.append(argument)
      }
    }
    let options = try WorkloadArguments(
      rest, flag: flag, enginesOption: "--standby-read-engines", repetitions: 3, engines: ["postgres"]
    ) { argument, number in
      switch argument {
      case "--standby-read-rows": rows = try number()
      case "--standby-read-seconds": seconds = try number()
      default: return false
      }
      return true
    }
    guard let schema else { throw BenchError("the item schema is malformed") }
    guard PostgresServer.url != nil else {
      throw BenchError(PostgresServer.absence ?? "name the primary with --postgres-url")
    }
    guard standbys.count >= 2 else {
      throw UsageError(message: "--standby-reads needs two standbys: --standby-hosts HOST:PORT,HOST:PORT")
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    let database = try PostgresDatabase("coffer_bench_standby_reads")
    try database.recreate()
    let (head, primary, tail) = try parts(of: database.url)
    say(
      "coffer-bench: \(tasks) tasks doing point gets on \(rows.formatted()) rows with reads on 1, 2 and 3 servers, "
        + "\(seconds) s each, \(options.repetitions) repetitions")
    let writer = try await Store.open(url: database.url, registry: .makeBuiltIn())
    try await writer.prepare(schemas: [schema])
    try await writer.backend.insert(into: schema, count: rows) { row(Int64($0)) }
    try await writer.close()

    let setups = [
      Setup(name: "1 server (primary, reads=primary)", hosts: [primary], reads: "primary"),
      Setup(name: "2 servers (primary + 1 standby, reads=any)", hosts: [primary, standbys[0]], reads: "any"),
      Setup(
        name: "3 servers (primary + 2 standbys, reads=any)", hosts: [primary] + standbys.prefix(2),
        reads: "any"),
    ]
    var samples = Array(repeating: [Double](), count: setups.count)
    var shares = Array(repeating: [String: Int](), count: setups.count)
    for repetition in 1...options.repetitions {
      for (index, setup) in setups.enumerated() {
        let url = head + setup.hosts.joined(separator: ",") + tail + "?pool=\(tasks)&reads=\(setup.reads)"
        let before = transactions(head: head, tail: tail, hosts: [primary] + standbys.prefix(2))
        let rate = try await measure(url: url, schema: schema, rows: rows, seconds: seconds)
        try await Task.sleep(for: .milliseconds(1500))  // the servers' statistics are flushed within a second
        let after = transactions(head: head, tail: tail, hosts: [primary] + standbys.prefix(2))
        samples[index].append(rate)
        for (host, count) in after { shares[index][host, default: 0] += count - (before[host] ?? count) }
        say("  run \(repetition), \(setup.name): \(Int(rate).formatted()) gets/s")
      }
    }
    let result = load.finish()
    let medians = samples.map { $0.sorted()[$0.count / 2] }
    var lines = [
      "# Reads spread over standbys (PostgreSQL)",
      "",
      "Written by `\(command)`: \(tasks) tasks doing point gets (`Store` SPI `get`, random ids of "
        + "\(rows.formatted()) rows) for \(seconds) s after a second of warm-up, with the store's reads on 1 "
        + "server (`reads=primary`), on 2 (`reads=any` over the primary and one streaming standby) and on 3 "
        + "(`reads=any` over the primary and two); the configurations take turns, \(options.repetitions) times, "
        + "and each figure is the median. \(result.sentence) Machine: \(machineDescription()).",
      "PostgreSQL: \(PostgresServer.describe()); the standbys are streaming replicas on the same machine.",
      "",
      "| reads on | gets/s | ÷ 1 server | share of each server's transactions (primary, standby 1, standby 2) |",
      "|---|---:|---:|---|",
    ]
    let servers = [primary] + standbys.prefix(2)
    for (index, setup) in setups.enumerated() {
      let total = max(1, servers.reduce(0) { $0 + max(0, shares[index][$1, default: 0]) })
      let split = servers.map {
        String(format: "%.0f %%", 100 * Double(max(0, shares[index][$0, default: 0])) / Double(total))
      }
      lines.append(
        "| \(setup.name) | \(Int(medians[index]).formatted()) | "
          + String(format: "%.2fx", medians[index] / max(medians[0], 1))
          + " | \(split.joined(separator: ", ")) |")
    }
    let cores = ProcessInfo.processInfo.activeProcessorCount
    lines += [
      "",
      "What this machine can show: it has \(cores) cores, shared by the client (8 tasks and postgres-nio's event "
        + "loops), every server process, and whatever else runs (the load line above counts the servers with the "
        + "other processes; other engineers were building on this machine). Every get costs CPU in the client and "
        + "in one server process, and all of them draw on the same cores: a standby on this machine adds no CPU, "
        + "so throughput cannot scale with the number of servers here, and the extra processes, connections and "
        + "background position checks cost a little. What it does show is that the reads reach every server "
        + "(the share column) and what the routing costs when the CPU is the limit. Scaling needs each server on "
        + "cores or machines of its own, with the client on others.",
      "",
    ]
    let text = lines.joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "StandbyReads.md", to: options.output) }
  }

  /// `tasks` tasks getting random ids for `seconds` seconds after a second of warm-up; gets per second.
  private static func measure(url: String, schema: EntitySchema, rows: Int, seconds: Int) async throws
    -> Double
  {
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: [schema])
    let backend = store.backend
    func getting(for duration: Duration) async throws -> Int {
      try await withThrowingTaskGroup(of: Int.self) { group in
        let deadline = ContinuousClock.now + duration
        for task in 0..<tasks {
          group.addTask {
            var generator = SystemRandomNumberGenerator()
            var done = 0
            while ContinuousClock.now < deadline {
              for _ in 0..<50 {
                let id = Int64.random(in: 0..<Int64(rows), using: &generator)
                let found = try await backend.get(entity: schema, ids: [.int(id)])
                guard found.count == 1 else { throw BenchError("task \(task): item \(id) not found") }
                done += 1
              }
            }
            return done
          }
        }
        return try await group.reduce(0, +)
      }
    }
    _ = try await getting(for: .seconds(1))
    let start = ContinuousClock.now
    let done = try await getting(for: .seconds(seconds))
    let elapsed = Measure.seconds(ContinuousClock.now - start)
    try await store.close()
    return Double(done) / elapsed
  }

  /// The URL split around its host: `postgres://user:password@`, `host:port`, `/database`.
  private static func parts(of url: String) throws -> (String, String, String) {
    guard let at = url.range(of: "@"), let slash = url[at.upperBound...].firstIndex(of: "/") else {
      throw BenchError("the PostgreSQL URL names no user@host/database")
    }
    let path =
      url[slash...].split(separator: "?", maxSplits: 1).first.map(String.init) ?? String(url[slash...])
    return (String(url[..<at.upperBound]), String(url[at.upperBound..<slash]), path)
  }

  /// Each server's committed transactions in the benchmark's database, by `host:port`.
  private static func transactions(head: String, tail: String, hosts: [String]) -> [String: Int] {
    var counts: [String: Int] = [:]
    for host in hosts {
      guard let connection = try? PQConnection(head + host + tail),
        let text = try? connection.scalar(
          "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"),
        let count = Int(text)
      else { continue }
      counts[host] = count
    }
    return counts
  }
}
