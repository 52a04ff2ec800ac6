import Foundation

/// The cross-system suite: every system does each operation on the same messages, interleaved
/// (each repetition runs every system once before the next repetition starts), and every read
/// is checked against the expected answer, outside the timing.
struct Suite {
  var sizes: [Int]
  var gets = 100_000
  var pages = 10_000
  var commits = 1_000
  /// Commits stop early for a system once they have taken this long (a whole-file store at a
  /// million rows rewrites for every commit); the median is over those that ran.
  var commitBudget: Duration = .seconds(20)
  /// Point gets and thread pages stop early for a system once one repetition has taken this
  /// long (a store without an index scans every row for a page); the time per call is over
  /// those that ran.
  var readBudget: Duration = .seconds(15)
  /// Repetitions at a size: five below 1,000,000 rows, where a median of five shrugs off a
  /// moment of a busy machine better than one of three; one at 1,000,000.
  var repetitions: (Int) -> Int = { $0 >= 1_000_000 ? 1 : 5 }
  var keys: [String]
  /// How many tasks do point gets at once in the concurrent gets.
  static let getters = 8

  func run(log: (String) -> Void) async throws -> [Result] {
    var results: [Result] = []
    for rows in sizes {
      log("\(rows.formatted()) rows")
      results += try await run(rows: rows, log: log)
    }
    return results
  }

  private func run(rows: Int, log: (String) -> Void) async throws -> [Result] {
    let messages = Workload.messages(rows)
    let expected = Expected(messages)
    let systems = keys.compactMap(SystemCatalog.make)
    let folder = try ScratchFolder("suite")
    defer { folder.remove() }
    var results: [Result] = []
    func record(_ operation: Operation, _ system: any BenchSystem, _ value: Double) {
      results.append(Result(operation: operation, system: system.name, rows: rows, value: value))
      let shown =
        operation.isThroughput
        ? SuiteReport.throughput(value)
        : operation.isTime ? SuiteReport.duration(value) : "\(Int64(value) / 1024) KiB"
      log("  \(operation.rawValue) — \(system.name): \(shown)")
    }
    let repetitions = repetitions(rows)

    // Bulk insert into a new store; the last repetition's store is used by what follows.
    var samples = Samples(systems.count)
    for repetition in 0..<repetitions {
      for (index, system) in systems.enumerated() {
        let place = folder.file("\(index)-\(repetition)")
        try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
        if repetition > 0 {
          try await system.close()
          try FileManager.default.removeItem(atPath: folder.file("\(index)-\(repetition - 1)"))
        }
        try await system.create(in: place)
        try await samples.time(index) { try await system.bulkInsert(messages) }
      }
    }
    for (index, system) in systems.enumerated() { record(.bulkInsert, system, samples.median(index)) }

    // Point gets by random ids.
    var random = SplitMix64(state: 11)
    let ids = (0..<gets).map { _ in messages[random.below(messages.count)].id }
    samples = Samples(systems.count)
    for _ in 0..<repetitions {
      for (index, system) in systems.enumerated() {
        var sum: Int64 = 0
        let done = try await samples.timeEach(index, count: ids.count, budget: readBudget) { position in
          sum &+= try await system.get(ids[position])?.threadID ?? -1
        }
        try expected.check(sum == expected.threadSum(of: ids.prefix(done)), system, "point gets")
        if done < ids.count { log("    (\(system.name): \(done) gets within the time budget)") }
      }
    }
    for (index, system) in systems.enumerated() { record(.pointGet, system, samples.median(index)) }

    // The same gets from eight tasks at once, for the systems that take part: the time per get
    // over all tasks (the report shows gets per second). Each task's reads are checked.
    samples = Samples(systems.count)
    var concurrent = Set<Int>()
    for _ in 0..<repetitions {
      for (index, system) in systems.enumerated() {
        let clock = ContinuousClock()
        let start = clock.now
        guard
          let tallies = try await system.concurrentGets(ids, tasks: Self.getters, until: start + readBudget)
        else { continue }
        let elapsed = clock.now - start
        let done = tallies.reduce(0) { $0 + $1.done }
        samples.add(index, Measure.seconds(elapsed) / Double(max(done, 1)))
        concurrent.insert(index)
        for (task, tally) in tallies.enumerated() {
          let mine = stride(from: task, to: ids.count, by: Self.getters).prefix(tally.done).map { ids[$0] }
          try expected.check(
            tally.threadSum == expected.threadSum(of: mine[...]), system, "concurrent point gets")
        }
        if done < ids.count { log("    (\(system.name): \(done) concurrent gets within the time budget)") }
      }
    }
    for (index, system) in systems.enumerated() where concurrent.contains(index) {
      record(.concurrentGets, system, samples.median(index))
    }

    // Thread pages: the newest 50 messages of random threads.
    let threads = (0..<pages).map { _ in Int64(random.below(Workload.threads)) }
    samples = Samples(systems.count)
    for _ in 0..<repetitions {
      for (index, system) in systems.enumerated() {
        var sum: Int64 = 0
        let done = try await samples.timeEach(index, count: threads.count, budget: readBudget) { position in
          sum &+= try await system.threadPage(threads[position]).reduce(0) { $0 &+ $1.id }
        }
        try expected.check(sum == expected.pageSum(of: threads.prefix(done)), system, "thread pages")
        if done < threads.count { log("    (\(system.name): \(done) pages within the time budget)") }
      }
    }
    for (index, system) in systems.enumerated() { record(.threadPage, system, samples.median(index)) }

    // Full scan.
    samples = Samples(systems.count)
    for _ in 0..<repetitions {
      for (index, system) in systems.enumerated() {
        var scanned: [ChatMessage] = []
        try await samples.time(index) { scanned = try await system.scan() }
        try expected.check(
          scanned.count == rows && scanned.reduce(0) { $0 &+ $1.id &* $1.threadID } == expected.scanSum,
          system,
          "full scan")
      }
    }
    for (index, system) in systems.enumerated() { record(.fullScan, system, samples.median(index)) }

    // Update of every tenth message, in one batch; repetitions alternate two versions of them.
    let (tenth, edited) = Workload.tenthAndEdited(messages)
    samples = Samples(systems.count)
    for repetition in 0..<repetitions {
      for (index, system) in systems.enumerated() {
        try await samples.time(index) { try await system.update(repetition % 2 == 0 ? edited : tenth) }
      }
    }
    for (index, system) in systems.enumerated() { record(.update, system, samples.median(index)) }

    // Single-row durable commits, in rounds of 50 per system.
    let durable = systems.enumerated().filter { $0.element.isDurable }
    samples = Samples(systems.count)
    var spent = [Duration](repeating: .zero, count: systems.count)
    var done = [Int](repeating: 0, count: systems.count)
    var commitRandom = SplitMix64(state: 5)
    let targets = (0..<commits).map { _ in messages[commitRandom.below(messages.count)] }
    while durable.contains(where: { done[$0.offset] < commits && spent[$0.offset] < commitBudget }) {
      for (index, system) in durable where done[index] < commits && spent[index] < commitBudget {
        for _ in 0..<min(50, commits - done[index]) {
          var message = targets[done[index]]
          message.isRead.toggle()
          spent[index] += try await samples.time(index) { try await system.commit(message) }
          done[index] += 1
        }
      }
    }
    for (index, system) in durable {
      record(.commit, system, samples.median(index))
      if done[index] < commits { log("    (\(system.name): \(done[index]) commits within the time budget)") }
    }

    // Size on disk after close.
    for system in systems {
      try await system.close()
      if system.isDurable { record(.fileSize, system, Double(system.fileSize())) }
    }

    // Peak memory of a bulk insert, each system in a fresh process.
    for (key, system) in zip(keys, systems) {
      record(.peakMemory, system, Double(try MemoryProbe.measure(system: key, rows: rows)))
    }
    return results
  }
}

/// Timing samples per system, in seconds.
struct Samples {
  private var samples: [[Double]]
  init(_ count: Int) { samples = Array(repeating: [], count: count) }

  /// Adds one sample measured elsewhere.
  mutating func add(_ index: Int, _ seconds: Double) { samples[index].append(seconds) }

  /// Times one run of `body` as one sample.
  @discardableResult
  mutating func time(_ index: Int, _ body: () async throws -> Void) async throws -> Duration {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    let elapsed = clock.now - start
    samples[index].append(Measure.seconds(elapsed))
    return elapsed
  }

  /// Calls `body` for positions 0..<count, in steps of 100, until done or past `budget`; one
  /// sample: the time per call. Returns how many calls ran.
  mutating func timeEach(_ index: Int, count: Int, budget: Duration, _ body: (Int) async throws -> Void)
    async throws -> Int
  {
    let clock = ContinuousClock()
    let start = clock.now
    var done = 0
    while done < count && clock.now - start < budget {
      for position in done..<min(done + 100, count) { try await body(position) }
      done = min(done + 100, count)
    }
    samples[index].append(Measure.seconds(clock.now - start) / Double(done))
    return done
  }

  func median(_ index: Int) -> Double {
    let sorted = samples[index].sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
  }
}

/// The answers every system must give, computed from the messages directly.
struct Expected {
  private let threadByID: [Int64: Int64]
  private let pageSums: [Int64: Int64]
  let scanSum: Int64

  init(_ messages: [ChatMessage]) {
    threadByID = Dictionary(uniqueKeysWithValues: messages.map { ($0.id, $0.threadID) })
    let byThread = Dictionary(grouping: messages, by: \.threadID)
    pageSums = byThread.mapValues { inThread in
      inThread.sorted { ($0.date, $1.id) > ($1.date, $0.id) }.prefix(50).reduce(0) { $0 &+ $1.id }
    }
    scanSum = messages.reduce(0) { $0 &+ $1.id &* $1.threadID }
  }

  func threadSum(of ids: ArraySlice<Int64>) -> Int64 { ids.reduce(0) { $0 &+ (threadByID[$1] ?? -1) } }
  func pageSum(of threads: ArraySlice<Int64>) -> Int64 { threads.reduce(0) { $0 &+ (pageSums[$1] ?? 0) } }

  func check(_ condition: Bool, _ system: any BenchSystem, _ operation: String) throws {
    guard condition else { throw BenchError("\(system.name) gave wrong results for \(operation)") }
  }
}
