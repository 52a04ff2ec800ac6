import Foundation

/// `coffer-bench --readers [--reader-rows N] [--reader-seconds S] [--reader-counts N,N,…]
/// [--open-rows N] [--repetitions N] [--output DIR] [--no-write]`: reads from 1, 2 and 4
/// readers while one writer commits single-row transactions, on the Coffer file backends and on
/// raw C libsqlite3 and liblmdb with as many threads; and the time to open a store of
/// `--open-rows` messages and read its first page. Writes Docs/Readers.md.
enum ReadersBenchmark {
  static let flag = "--readers"

  /// The systems of the concurrent part, each Coffer backend next to its raw C engine.
  static let pairs = [("coffer-sqlite", "raw-sqlite"), ("coffer-lmdb", "raw-lmdb")]
  /// The systems whose opening is timed: every file backend and the raw C engines.
  static let opened = ["coffer-sqlite", "raw-sqlite", "coffer-lmdb", "raw-lmdb", "coffer-plist"]

  /// Reads per second with readers at least this share of raw C's; commit latency with readers
  /// at most this multiple of the latency without.
  static let readGoal = 0.8
  static let commitGoal = 1.2

  struct Settings {
    var rows = 100_000
    var seconds = 3.0
    var readerCounts = [1, 2, 4]
    var openRows = 1_000_000
    var repetitions = 3
    var output: String?
    var write = true

    init(_ arguments: [String]) throws {
      var iterator = arguments.makeIterator()
      while let argument = iterator.next() {
        func number() throws -> Int {
          guard let value = iterator.next().flatMap(Int.init), value > 0 else {
            throw UsageError(message: "\(argument) needs a positive number")
          }
          return value
        }
        switch argument {
        case "--reader-rows": rows = max(1_000, try number())
        case "--reader-seconds": seconds = Double(try number())
        case "--reader-counts":
          readerCounts = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0) }
          guard !readerCounts.isEmpty, readerCounts.allSatisfy({ (1...64).contains($0) }) else {
            throw UsageError(message: "--reader-counts needs numbers from 1 to 64")
          }
        case "--open-rows": openRows = max(1_000, try number())
        case "--repetitions": repetitions = try number()
        case "--output": output = iterator.next()
        case "--no-write": write = false
        default: throw UsageError(message: "unknown argument \(argument) for \(flag)")
        }
      }
    }
  }

  static func run(_ arguments: [String]) async throws {
    let settings = try Settings(arguments)
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    let concurrent = try await measureConcurrent(settings)
    let opening = try await measureOpening(settings)
    let text = report(
      concurrent: concurrent, opening: opening, settings: settings, command: command, load: load.finish())
    print(text)
    if settings.write { try writeReport(text, named: "Readers.md", to: settings.output) }
  }

  // MARK: - Reads while one writer commits

  /// Per system and reader count (0: the writer alone), each repetition's reads per second and
  /// median and 99th-percentile commit seconds.
  struct Concurrent {
    var reads: [String: [Int: [Double]]] = [:]
    var commitMedians: [String: [Int: [Double]]] = [:]
    var commitTails: [String: [Int: [Double]]] = [:]
    var names: [String: String] = [:]
  }

  static func measureConcurrent(_ settings: Settings) async throws -> Concurrent {
    let keys = pairs.flatMap { [$0.0, $0.1] }
    let systems = try keys.map(system)
    say(
      "coffer-bench: readers and a writer, \(settings.rows.formatted()) messages, \(keys.joined(separator: ", "))"
    )
    let messages = Workload.messages(settings.rows)
    let answers = Answers(messages)
    let folder = try ScratchFolder("readers")
    defer { folder.remove() }
    for system in systems {
      try await system.create(in: folder.path)
      try await system.bulkInsert(messages)
    }
    // Each write changes a message's read flag, and the next round through changes it back, so
    // every commit writes a row that differs from the stored one.
    var random = SplitMix64(state: 5)
    let changed = (0..<1_000).map { _ in
      var message = messages[random.below(messages.count)]
      message.isRead.toggle()
      return message
    }
    let writes =
      changed
      + changed.map { message in
        var message = message
        message.isRead.toggle()
        return message
      }
    let plans = (0..<(settings.readerCounts.max() ?? 1)).map { _ in
      ReadPlan(
        ids: (0..<ReadPlan.length).map { _ in Int64(random.below(settings.rows) + 1) },
        threads: (0..<ReadPlan.length).map { _ in Int64(random.below(Workload.threads)) })
    }

    var result = Concurrent()
    for repetition in 0..<settings.repetitions {
      for (key, system) in zip(keys, systems) {
        result.names[key] = system.name
        for readers in [0] + settings.readerCounts {
          let clock = ContinuousClock()
          let start = clock.now
          let tally = try await system.readWhileWriting(
            Array(plans.prefix(readers)), writes: writes, until: start + .seconds(settings.seconds))
          let elapsed = Measure.seconds(clock.now - start)
          for (plan, reader) in zip(plans, tally.readers) {
            guard answers.check(reader, plan: plan) else {
              throw BenchError(
                "\(system.name): a reader's answers differ from the messages' with \(readers) readers")
            }
          }
          let calls = tally.readers.reduce(0) { $0 + $1.calls }
          let commits = tally.commits.sorted()
          guard !commits.isEmpty else {
            throw BenchError("\(system.name): no commit finished in the time given")
          }
          result.reads[key, default: [:]][readers, default: []].append(Double(calls) / elapsed)
          result.commitMedians[key, default: [:]][readers, default: []].append(commits[commits.count / 2])
          result.commitTails[key, default: [:]][readers, default: []].append(
            commits[min(commits.count - 1, commits.count * 99 / 100)])
          say(
            "  \(system.name), \(readers) readers: \(Int(Double(calls) / elapsed)) reads/s, "
              + "\(commits.count) commits, median \(String(format: "%.2f", commits[commits.count / 2] * 1e3)) ms"
          )
        }
      }
      say("  repetition \(repetition + 1) of \(settings.repetitions) done")
    }
    for system in systems { try await system.close() }
    return result
  }

  static func system(_ key: String) throws -> any ReadWriteSystem {
    guard let system = SystemCatalog.make(key) as? any ReadWriteSystem else {
      throw BenchError(
        "\(key) cannot take part in \(flag): \(SystemCatalog.absence(key) ?? "no such system")")
    }
    return system
  }

  /// The answers a reader should see, computed from the messages outside the timing: the writer
  /// changes only read flags, so every message keeps its thread and every thread its size.
  struct Answers {
    private var threadOfID: [Int64: Int64] = [:]
    private var threadSizes: [Int64: Int] = [:]

    init(_ messages: [ChatMessage]) {
      for message in messages {
        threadOfID[message.id] = message.threadID
        threadSizes[message.threadID, default: 0] += 1
      }
    }

    /// Whether a reader's tally matches the plan's first `tally.calls` calls.
    func check(_ tally: ReaderTally, plan: ReadPlan) -> Bool {
      var threadSum: Int64 = 0
      var pageRows = 0
      for call in 0..<tally.calls {
        let position = call % plan.ids.count
        if ReadPlan.isPage(call) {
          pageRows += min(50, threadSizes[plan.threads[position]] ?? 0)
        } else {
          threadSum &+= threadOfID[plan.ids[position]] ?? -1
        }
      }
      return threadSum == tally.threadSum && pageRows == tally.pageRows
    }
  }

  // MARK: - Opening

  /// Per system, each round's seconds to open the store and read its first page.
  static func measureOpening(_ settings: Settings) async throws -> (
    names: [String: String], seconds: [String: [Double]]
  ) {
    say(
      "coffer-bench: opening a store of \(settings.openRows.formatted()) messages, \(opened.joined(separator: ", "))"
    )
    let messages = Workload.messages(settings.openRows)
    let thread = messages[0].threadID
    let expected = messages.filter { $0.threadID == thread }.sorted { ($0.date, $0.id) > ($1.date, $1.id) }
      .prefix(50).map(\.id)
    let folder = try ScratchFolder("opening")
    defer { folder.remove() }
    var systems: [(String, any ReadWriteSystem)] = []
    for key in opened {
      let system = try system(key)
      try await system.create(in: folder.path)
      try await system.bulkInsert(messages)
      try await system.close()
      systems.append((key, system))
    }
    var names: [String: String] = [:]
    var seconds: [String: [Double]] = [:]
    let clock = ContinuousClock()
    for _ in 0..<max(settings.repetitions, 5) {
      for (key, system) in systems {
        names[key] = system.name
        let start = clock.now
        let page = try await system.reopen(readingThread: thread)
        seconds[key, default: []].append(Measure.seconds(clock.now - start))
        try await system.close()
        guard page.map(\.id) == expected else {
          throw BenchError("\(system.name): the first page after opening is not the thread's newest 50")
        }
      }
    }
    return (names, seconds)
  }

  // MARK: - Report

  static func report(
    concurrent: Concurrent, opening: (names: [String: String], seconds: [String: [Double]]),
    settings: Settings, command: String, load: MachineLoad.Result
  ) -> String {
    func median(_ values: [Double]?) -> Double? {
      guard let values, !values.isEmpty else { return nil }
      return values.sorted()[values.count / 2]
    }
    func ms(_ seconds: Double?) -> String { seconds.map { String(format: "%.2f ms", $0 * 1e3) } ?? "—" }
    func ratio(_ value: Double, met: Bool) -> String {
      let text = String(format: "%.2fx", value)
      return met ? text : "**\(text)**"
    }
    var lines = [
      "# Readers and a writer, and opening a store",
      "",
      "Written by `\(command)`; every figure below was printed by that run. \(load.sentence) "
        + "Machine: \(machineDescription()).",
      "",
      "## Reads while one writer commits",
      "",
      "\(settings.rows.formatted()) chat messages. For \(Int(settings.seconds)) seconds, one writer commits "
        + "single-row updates, each in its own durable transaction, while 0, "
        + settings.readerCounts.map(String.init).joined(separator: ", ")
        + " readers each make point gets by random id, every tenth call a thread page (the newest 50 "
        + "messages of a random thread). Raw C runs each reader and the writer on a thread with a "
        + "connection (SQLite) or transactions (LMDB) of its own; a Coffer store runs each as a task, all "
        + "sharing the one store. Reads are calls (gets and pages) per second, all readers together; every "
        + "answer is checked against the messages. Medians of \(settings.repetitions) repetitions, the "
        + "systems taking turns.",
      "",
      "| system | readers | reads/s | ÷ raw C (goal ≥ \(String(format: "%.1f", readGoal))x) "
        + "| commit, median | commit, 99th percentile | ÷ commit alone (goal ≤ \(String(format: "%.1f", commitGoal))x) |",
      "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for (coffer, raw) in pairs {
      for key in [coffer, raw] {
        let alone = median(concurrent.commitMedians[key]?[0])
        for readers in [0] + settings.readerCounts {
          let reads = median(concurrent.reads[key]?[readers])
          let commit = median(concurrent.commitMedians[key]?[readers])
          var readRatio = "—"
          if key == coffer, readers > 0, let reads, let base = median(concurrent.reads[raw]?[readers]),
            base > 0
          {
            readRatio = ratio(reads / base, met: reads / base >= readGoal)
          }
          var commitRatio = "—"
          if readers > 0, let commit, let alone, alone > 0 {
            commitRatio = ratio(commit / alone, met: commit / alone <= commitGoal)
          }
          lines.append(
            "| \(concurrent.names[key] ?? key) | \(readers) | "
              + (readers == 0 ? "—" : (reads.map { String(Int($0.rounded())) } ?? "—"))
              + " | \(readRatio) | \(ms(commit)) | \(ms(median(concurrent.commitTails[key]?[readers]))) "
              + "| \(commitRatio) |")
        }
      }
    }
    lines += [
      "",
      "## Opening a store",
      "",
      "A store of \(settings.openRows.formatted()) chat messages, written and closed; then, "
        + "\(max(settings.repetitions, 5)) times per system, the systems taking turns: open it as an app does "
        + "at launch (Coffer: `Store.open(url:)` and `prepare`; raw C: open the connection or environment and "
        + "its databases) and read the newest 50 messages of a thread. The files are in the operating "
        + "system's cache, as they are just after they were written. Medians:",
      "",
      "| system | open and first page |",
      "|---|---:|",
    ]
    for key in opened {
      lines.append("| \(opening.names[key] ?? key) | \(ms(median(opening.seconds[key]))) |")
    }
    return (lines + [""]).joined(separator: "\n")
  }
}

extension ReadPlan {
  /// Calls in a plan; a reader that gets to its end starts again from the beginning.
  static let length = 1 << 16
}
