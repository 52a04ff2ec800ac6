import Foundation

/// Point gets on PostgreSQL three ways in one run, to check the baseline the PostgreSQL
/// backend's goals are set against: pgbench (PostgreSQL's own C client, `-M prepared`, a custom
/// script doing the same lookup on the same table), raw libpq driven from Swift (the suite's
/// `raw C libpq` system) and Coffer's PostgreSQL backend. Each is measured from one connection
/// (the time per get) and from eight at once (gets per second): pgbench with `-c 8 -j 8`, raw
/// libpq on eight threads with a connection each, Coffer from eight tasks on one store. Every
/// measurement runs for `--postgres-get-seconds` (default 5) over random ids of
/// `--postgres-get-rows` messages (default 100,000); the three take turns within each of
/// `--repetitions` (default 3) repetitions, and figures are medians.
///
/// The baseline holds when raw libpq's get takes at most 1.5x pgbench's time per transaction
/// and its eight threads reach at least 0.8x pgbench's eight clients; Coffer's goals are those of
/// Docs/Performance.md: a get within 1.3x of raw libpq, eight tasks at least 0.8x its throughput.
///
/// `coffer-bench --postgres-gets --postgres-url URL [--postgres-get-rows N]
/// [--postgres-get-seconds N] [--repetitions N] [--output DIR] [--no-write]`
enum PostgresGetsBenchmark {
  static let flag = "--postgres-gets"
  static let clients = 8

  /// One repetition's figures: seconds per get from one connection, gets per second from eight.
  struct Figures {
    var single: [String: Double] = [:]
    var concurrent: [String: Double] = [:]
    /// Seconds per get on each path of ``PostgresGetSpike``, and gets per second from eight.
    var spike: [String: Double] = [:]
    var spikeConcurrent: [String: Double] = [:]
  }

  static let systems = ["pgbench", "raw libpq", "Coffer"]

  static func run(_ arguments: [String]) async throws {
    var rows = 100_000
    var seconds = 5
    var spike = false
    let options = try WorkloadArguments(
      arguments, flag: flag, enginesOption: "--postgres-get-engines", repetitions: 3, engines: []
    ) { argument, number in
      switch argument {
      case "--postgres-get-rows": rows = try number()
      case "--postgres-get-seconds": seconds = try number()
      case "--postgres-get-spike": spike = true
      default: return false
      }
      return true
    }
    guard PostgresServer.url != nil else {
      throw BenchError(PostgresServer.absence ?? "name a PostgreSQL server with --postgres-url")
    }
    let pgbench = try Pgbench(rows: rows)
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: point gets on PostgreSQL over \(rows.formatted()) messages, \(seconds) s per "
        + "measurement, \(options.repetitions) repetitions: pgbench, raw libpq, Coffer")

    let messages = Workload.messages(rows)
    let raw = RawPostgresSystem()
    try await raw.create(in: "")
    try await raw.bulkInsert(messages)
    let coffer = CofferSystem(name: "Coffer postgres", database: "coffer_bench_coffer_postgres")
    try await coffer.create(in: "")
    try await coffer.bulkInsert(messages)
    guard let rawURL = raw.databaseURL else { throw BenchError("raw libpq has no database") }
    try pgbench.analyze(rawURL)
    let pathSets = spike ? try await PostgresGetSpike.pathSets(rawURL, count: clients) : []
    let paths = pathSets.first ?? []

    var random = SplitMix64(state: 7)
    let ids = (0..<2_000_000).map { _ in messages[random.below(messages.count)].id }
    var figures: [Figures] = []
    let duration = Duration.seconds(seconds)
    for repetition in 1...options.repetitions {
      var figure = Figures()
      figure.single["pgbench"] = 1 / (try pgbench.transactionsPerSecond(rawURL, clients: 1, seconds: seconds))
      figure.single["raw libpq"] = try await perGet(raw.name, ids, for: duration) {
        try await raw.get($0)?.threadID == messages[Int($0) - 1].threadID
      }
      figure.single["Coffer"] = try await perGet(coffer.name, ids, for: duration) {
        try await coffer.get($0)?.threadID == messages[Int($0) - 1].threadID
      }
      for path in paths {
        figure.spike[path.name] = try await perGet("spike " + path.name, ids, for: duration) {
          try await path.threadID(of: $0) == messages[Int($0) - 1].threadID
        }
      }
      for index in paths.indices {
        figure.spikeConcurrent[paths[index].name] = try await throughput(
          pathSets.map { $0[index] }, ids, messages, for: duration)
      }
      figure.concurrent["pgbench"] = try pgbench.transactionsPerSecond(
        rawURL, clients: clients, seconds: seconds)
      figure.concurrent["raw libpq"] = try await throughput(raw, ids, messages, for: duration)
      figure.concurrent["Coffer"] = try await throughput(coffer, ids, messages, for: duration)
      for path in paths {
        say(
          String(
            format: "  spike %@: %.1f µs, %.0f/s", path.name, (figure.spike[path.name] ?? 0) * 1e6,
            figure.spikeConcurrent[path.name] ?? 0))
      }
      say(
        "  repetition \(repetition): "
          + systems.map { name in
            String(
              format: "%@ %.1f µs, %.0f/s", name, (figure.single[name] ?? 0) * 1e6,
              figure.concurrent[name] ?? 0)
          }.joined(separator: "; "))
      figures.append(figure)
    }
    try await raw.close()
    try await coffer.close()
    pgbench.remove()

    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    let single = Dictionary(
      uniqueKeysWithValues: systems.map { name in (name, median(figures.map { $0.single[name] ?? 0 })) })
    let concurrent = Dictionary(
      uniqueKeysWithValues: systems.map { name in (name, median(figures.map { $0.concurrent[name] ?? 0 })) })
    let get = (pgbench: single["pgbench"] ?? 0, raw: single["raw libpq"] ?? 0, coffer: single["Coffer"] ?? 0)
    let eight = (
      pgbench: concurrent["pgbench"] ?? 0, raw: concurrent["raw libpq"] ?? 0,
      coffer: concurrent["Coffer"] ?? 0
    )
    func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }
    let lines = [
      "# Point gets on PostgreSQL: pgbench, raw libpq and Coffer",
      "",
      "Written by `\(command)`: \(rows.formatted()) chat messages in the table the PostgreSQL backend makes, "
        + "point gets by random ids for \(seconds) s per measurement from one connection and from "
        + "\(clients) at once: pgbench (`-M prepared`, a script selecting the message's six columns by id, "
        + "`-c 1 -j 1` and `-c \(clients) -j \(clients)`) on raw libpq's table; raw libpq from Swift "
        + "(prepared statement, binary parameters and results, decoded into values; \(clients) threads with "
        + "a connection each); Coffer's PostgreSQL backend (`Store.get`; \(clients) tasks on one store). "
        + "The three take turns within each of \(options.repetitions) repetitions; figures are medians. "
        + "\(load.finish().sentence) Other processes include the PostgreSQL server this run measures. "
        + "Machine: \(machineDescription()).",
      "PostgreSQL: \(PostgresServer.describe()).",
      "",
      "| | pgbench | raw libpq | Coffer | raw libpq ÷ pgbench | Coffer ÷ raw libpq |",
      "|---|---:|---:|---:|---:|---:|",
      String(
        format: "| one connection: time per get | %.1f µs | %.1f µs | %.1f µs | %.2fx (goal ≤ 1.5x: %@) | "
          + "%.2fx (goal ≤ 1.3x: %@) |",
        get.pgbench * 1e6, get.raw * 1e6, get.coffer * 1e6, get.raw / get.pgbench,
        verdict(get.raw <= 1.5 * get.pgbench), get.coffer / get.raw, verdict(get.coffer <= 1.3 * get.raw)),
      String(
        format: "| %d at once: gets per second | %.0f | %.0f | %.0f | %.2fx (goal ≥ 0.8x: %@) | "
          + "%.2fx (goal ≥ 0.8x: %@) |",
        clients, eight.pgbench, eight.raw, eight.coffer, eight.raw / eight.pgbench,
        verdict(eight.raw >= 0.8 * eight.pgbench), eight.coffer / eight.raw,
        verdict(eight.coffer >= 0.8 * eight.raw)),
      "",
    ]
    var spikeLines: [String] = []
    if !paths.isEmpty {
      spikeLines = [
        "## The spike: one lookup reached from async code each way",
        "",
        "The same lookup on raw libpq's table and one connection, from the same task, in the same repetitions "
          + "(see `PostgresGetSpike`): `blocking` waits in libpq on the task's own thread; `nio` is postgres-nio "
          + "alone with the task on the connection's event loop, and without that preference; `queue` runs libpq on a serial dispatch queue; "
          + "`poller` sends with libpq on the task's thread and one thread waits on the sockets with epoll; "
          + "`poller+spin` first reads the socket for up to 40 or 200 µs on the task's thread.",
        "",
        "| path | one connection: time per get | ÷ blocking | \(clients) tasks at once: gets per second | "
          + "÷ raw libpq's \(clients) threads |",
        "|---|---:|---:|---:|---:|",
      ]
      let floor = median(figures.map { $0.spike["blocking"] ?? 0 })
      for path in paths {
        let value = median(figures.map { $0.spike[path.name] ?? 0 })
        let rate = median(figures.map { $0.spikeConcurrent[path.name] ?? 0 })
        spikeLines.append(
          String(
            format: "| %@ | %.1f µs | %.2fx | %.0f | %.2fx |", path.name, value * 1e6, value / floor, rate,
            rate / eight.raw))
      }
      spikeLines.append("")
    }
    let text = (lines + spikeLines).joined(separator: "\n")
    print(text)
    if options.write { try writeReport(text, named: "PostgresGets.md", to: options.output) }
  }

  /// Seconds per get from one connection: `read(id)` for `ids` in order until `duration` has
  /// passed; `read` says whether it found the message as inserted.
  static func perGet(
    _ name: String, _ ids: [Int64], for duration: Duration, _ read: (Int64) async throws -> Bool
  ) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + duration
    var done = 0
    while done < ids.count {
      if done % 100 == 0 && clock.now >= deadline { break }
      guard try await read(ids[done]) else { throw BenchError("\(name): message \(ids[done]) read wrong") }
      done += 1
    }
    return Measure.seconds(clock.now - start) / Double(done)
  }

  /// Gets per second from one task per path at once until `duration` has passed, each task's
  /// reads checked against `messages`.
  static func throughput(
    _ paths: [any PostgresGetSpike.Path], _ ids: [Int64], _ messages: [ChatMessage], for duration: Duration
  ) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    let deadline = start + duration
    let count = paths.count
    let done = try await inTasks(count) { task in
      var done = 0
      for position in stride(from: task, to: ids.count, by: count) {
        if done % 100 == 0 && ContinuousClock.now >= deadline { break }
        guard try await paths[task].threadID(of: ids[position]) == messages[Int(ids[position]) - 1].threadID
        else {
          throw BenchError("spike \(paths[task].name): message \(ids[position]) read wrong")
        }
        done += 1
      }
      return done
    }
    return Double(done.reduce(0, +)) / Measure.seconds(clock.now - start)
  }

  /// Gets per second from ``clients`` at once until `duration` has passed; each client's reads
  /// are checked against `messages` (whose ids are 1, 2, …).
  static func throughput(
    _ system: some BenchSystem, _ ids: [Int64], _ messages: [ChatMessage], for duration: Duration
  ) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    guard let tallies = try await system.concurrentGets(ids, tasks: clients, until: start + duration) else {
      throw BenchError("\(system.name) does no concurrent gets")
    }
    let elapsed = Measure.seconds(clock.now - start)
    for (client, tally) in tallies.enumerated() {
      let read = stride(from: client, to: ids.count, by: clients).prefix(tally.done)
      let expected = read.reduce(Int64(0)) { $0 &+ messages[Int(ids[$1]) - 1].threadID }
      guard tally.threadSum == expected else {
        throw BenchError("\(system.name): client \(client)'s gets read other messages than asked for")
      }
    }
    return Double(tallies.reduce(0) { $0 + $1.done }) / elapsed
  }
}

/// PostgreSQL's benchmark client, run on a script of its own: the lookup the other systems do.
private struct Pgbench {
  let program: String
  let script: String

  init(rows: Int) throws {
    let candidates =
      ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? [])
      .sorted { $0.compare($1, options: .numeric) == .orderedDescending }
      .map { "/usr/lib/postgresql/\($0)/bin/pgbench" } + ["/usr/bin/pgbench", "/usr/local/bin/pgbench"]
    guard let program = candidates.first(where: FileManager.default.isExecutableFile(atPath:)) else {
      throw BenchError("pgbench was not found; install the postgresql-contrib or postgresql package")
    }
    self.program = program
    script =
      FileManager.default.temporaryDirectory.appendingPathComponent(
        "coffer-bench-pgbench-\(UUID().uuidString).sql"
      ).path
    try """
    \\set id random(1, \(rows))
    SELECT id, "threadID", sender, text, date, "isRead" FROM "ChatMessage" WHERE id = :id;

    """.write(toFile: script, atomically: true, encoding: .utf8)
  }

  /// Removes the script.
  func remove() { try? FileManager.default.removeItem(atPath: script) }

  /// Gives the planner the table's statistics, as a long-lived table has.
  func analyze(_ url: String) throws {
    try PQConnection(url).execute(#"ANALYZE "ChatMessage""#)
  }

  /// Runs the script from `clients` connections for about `seconds` and returns pgbench's
  /// transactions per second (without the connection time). pgbench's own time limit (`-T`)
  /// rests on an alarm signal, which a process started from a Swift program inherits blocked, so
  /// the run is a count of transactions (`-t`) sized by a short run before it.
  func transactionsPerSecond(_ url: String, clients: Int, seconds: Int) throws -> Double {
    let probe = try transactionsPerSecond(url, clients: clients, transactions: 500)
    let transactions = max(500, Int(probe * Double(seconds) / Double(clients)))
    return try transactionsPerSecond(url, clients: clients, transactions: transactions)
  }

  /// Runs the script `transactions` times from each of `clients` connections and returns
  /// pgbench's transactions per second.
  func transactionsPerSecond(_ url: String, clients: Int, transactions: Int) throws -> Double {
    // The password goes in the environment, not the command line other users can read.
    guard var components = URLComponents(string: url) else {
      throw BenchError("the database URL does not parse")
    }
    var environment = ProcessInfo.processInfo.environment
    if let password = components.password { environment["PGPASSWORD"] = password }
    components.password = nil
    guard let passwordless = components.string else { throw BenchError("the database URL does not parse") }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: program)
    process.arguments = [
      "-n", "-M", "prepared", "-f", script, "-c", String(clients), "-j", String(clients), "-t",
      String(transactions),
      passwordless,
    ]
    process.environment = environment
    let output = Pipe()
    process.standardOutput = output
    process.standardError = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0,
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("tps = ") }),
      let value = Double(line.dropFirst("tps = ".count).prefix { $0 != " " })
    else {
      throw BenchError("pgbench failed (status \(process.terminationStatus)): \(text.suffix(400))")
    }
    guard !text.contains("number of failed transactions: ") || text.contains("failed transactions: 0 ") else {
      throw BenchError("pgbench had failed transactions: \(text.suffix(400))")
    }
    return value
  }
}
