@_spi(Backend) import Coffer
import CofferMacros
import CofferStores
import Foundation

/// A thread of the query-model benchmark: what a message's `threadID` refers to.
@Storable
struct BenchThread: Equatable {
  var id: Int64
  var title: String
}

/// The query-model benchmark: aggregates and eager loading over the workload's chat messages.
///
/// Three operations, each the median of `--repetitions` runs:
/// - unread messages per thread for all 200 threads (`filter(\.isRead == false).group(by:
///   \.threadID).count()`);
/// - the sum of a numeric field over every message (`sum(\.threadID)`);
/// - a thread with its newest 50 messages (`including(\ChatMessage.threadID, sort:limit:)`).
///
/// On SQLite against raw C libsqlite3 running the same SQL (`GROUP BY`, `sum`, the thread's row
/// and a `LIMIT 50` page), goal within 1.3x; on LMDB and memory against the same answer computed
/// in app code through the typed API (fetch the rows, count or add up in Swift; get the thread,
/// then query its page), goal faster.
///
/// `coffer-bench --queries [--queries-rows N] [--repetitions N] [--output DIR] [--no-write]`
enum QueryModelBenchmark {
  static let flag = "--queries"
  static let sqliteGoal = 1.3

  struct Figure {
    var operation: String
    var engine: String
    var coffer: Duration
    var baseline: Duration
    var baselineName: String
    var goal: String
    var met: Bool
  }

  /// A duration in milliseconds, or in microseconds below one millisecond.
  static func time(_ duration: Duration) -> String {
    let seconds = Measure.seconds(duration)
    return seconds < 0.001
      ? String(format: "%.1f µs", seconds * 1e6) : String(format: "%.2f ms", seconds * 1000)
  }

  static func run(_ arguments: [String]) async throws {
    var rows = 100_000
    var repetitions = 15
    var output: String?
    var write = true
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      func number() throws -> Int {
        guard let text = iterator.next(), let value = Int(text), value > 0 else {
          throw UsageError(message: "\(argument) needs a positive number")
        }
        return value
      }
      switch argument {
      case "--queries-rows": rows = try number()
      case "--repetitions": repetitions = try number()
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "unknown argument \(argument) for \(flag)")
      }
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say("coffer-bench: query model, \(rows.formatted()) messages, \(repetitions) repetitions")
    let messages = Workload.messages(rows)
    let expectedUnread = Dictionary(grouping: messages.filter { !$0.isRead }, by: \.threadID).mapValues(
      \.count)
    let expectedSum = messages.reduce(Int64(0)) { $0 + $1.threadID }
    let thread: Int64 = 7
    // Compared by id: a stored date is kept to the microsecond.
    let expectedPage = Array(
      messages.filter { $0.threadID == thread }.sorted { ($0.date, $0.id) > ($1.date, $1.id) }.prefix(50))
    var figures: [Figure] = []

    for engine in ["sqlite", "lmdb", "memory"] {
      let folder = try ScratchFolder("queries-\(engine)")
      defer { folder.remove() }
      let url =
        switch engine {
        case "sqlite": "sqlite://\(folder.path)/store.sqlite"
        case "lmdb": "lmdb://\(folder.path)/store-lmdb"
        default: "memory:queries-bench-\(UUID().uuidString)"
        }
      let store = try await Store.open(url: url, registry: .makeBuiltIn())
      try await store.prepare([ChatMessage.self, BenchThread.self])
      try await store.insert(messages)
      try await store.insert((0..<Workload.threads).map { BenchThread(id: Int64($0), title: "thread \($0)") })

      // Coffer.
      var unread: [AggregateGroup<Int64, Int>] = []
      let cofferUnread = try await Measure.median(repetitions: repetitions) {
        unread = try await store.query(ChatMessage.self).filter(\.isRead == false).group(by: \.threadID)
          .count()
      }
      guard Dictionary(uniqueKeysWithValues: unread.map { ($0.key, $0.value) }) == expectedUnread else {
        throw BenchError("\(engine): unread counts differ from the messages'")
      }
      var sum: Int64?
      let cofferSum = try await Measure.median(repetitions: repetitions) {
        sum = try await store.query(ChatMessage.self).sum(\.threadID)
      }
      guard sum == expectedSum else { throw BenchError("\(engine): the sum differs") }
      var loaded: [(parent: BenchThread, children: [ChatMessage])] = []
      let cofferPage = try await Measure.median(repetitions: repetitions) {
        loaded = try await store.query(BenchThread.self).filter(\.id == thread)
          .including(\ChatMessage.threadID, limit: 50) { $0.sort(\.date, .descending) }.fetch()
      }
      guard loaded.count == 1, loaded[0].children.map(\.id) == expectedPage.map(\.id) else {
        throw BenchError("\(engine): the thread's page differs")
      }

      if engine == "sqlite" {
        try await store.close()
        let raw = RawSQLiteSystem()
        try await raw.create(in: folder.path)
        try await raw.bulkInsert(messages)
        try raw.insertThreads(Workload.threads)
        var rawGroups: [(thread: Int64, count: Int)] = []
        let rawUnread = try await Measure.median(repetitions: repetitions) {
          rawGroups = try raw.unreadPerThread()
        }
        guard Dictionary(uniqueKeysWithValues: rawGroups.map { ($0.thread, $0.count) }) == expectedUnread
        else {
          throw BenchError("raw SQLite: unread counts differ")
        }
        var rawSum: Int64 = 0
        let rawSumTime = try await Measure.median(repetitions: repetitions) {
          rawSum = try raw.sumOfThreadIDs()
        }
        guard rawSum == expectedSum else { throw BenchError("raw SQLite: the sum differs") }
        var rawPage: [ChatMessage] = []
        let rawPageTime = try await Measure.median(repetitions: repetitions) {
          rawPage = try raw.threadWithNewest(thread, limit: 50).messages
        }
        guard rawPage.map(\.id) == expectedPage.map(\.id) else {
          throw BenchError("raw SQLite: the page differs")
        }
        try await raw.close()
        let name = "raw C libsqlite3, same SQL"
        for (operation, coffer, baseline) in [
          ("unread per thread (200 groups)", cofferUnread, rawUnread),
          ("sum over every message", cofferSum, rawSumTime),
          ("thread + newest 50 (eager)", cofferPage, rawPageTime),
        ] {
          figures.append(
            Figure(
              operation: operation, engine: engine, coffer: coffer, baseline: baseline, baselineName: name,
              goal: "≤ \(sqliteGoal)x", met: Measure.seconds(coffer) <= sqliteGoal * Measure.seconds(baseline)
            ))
        }
      } else {
        // The same answers in app code, through the typed API.
        let appUnread = try await Measure.median(repetitions: repetitions) {
          let rows = try await store.query(ChatMessage.self).filter(\.isRead == false).fetch()
          var counts: [Int64: Int] = [:]
          for message in rows { counts[message.threadID, default: 0] += 1 }
          guard counts == expectedUnread else { throw BenchError("\(engine): app-code counts differ") }
        }
        let appSum = try await Measure.median(repetitions: repetitions) {
          let total = try await store.all(ChatMessage.self).reduce(Int64(0)) { $0 + $1.threadID }
          guard total == expectedSum else { throw BenchError("\(engine): app-code sum differs") }
        }
        let appPage = try await Measure.median(repetitions: repetitions) {
          _ = try await store.get(BenchThread.self, id: thread)
          let page = try await store.query(ChatMessage.self).filter(\.threadID == thread)
            .sort(\.date, .descending).limit(50).fetch()
          guard page.map(\.id) == expectedPage.map(\.id) else {
            throw BenchError("\(engine): app-code page differs")
          }
        }
        try await store.close()
        let name = "typed API + app code"
        for (operation, coffer, baseline) in [
          ("unread per thread (200 groups)", cofferUnread, appUnread),
          ("sum over every message", cofferSum, appSum),
          ("thread + newest 50 (eager)", cofferPage, appPage),
        ] {
          figures.append(
            Figure(
              operation: operation, engine: engine, coffer: coffer, baseline: baseline, baselineName: name,
              goal: "faster", met: coffer < baseline))
        }
      }
      for figure in figures where figure.engine == engine {
        say(
          "\(engine): \(figure.operation): Coffer \(time(figure.coffer)), "
            + "\(figure.baselineName) \(time(figure.baseline))")
      }
    }

    var lines = [
      "# Query-model speed",
      "",
      "Written by `\(command)`: aggregates and eager loading over \(rows.formatted()) chat messages in "
        + "\(Workload.threads) threads, each figure the median of \(repetitions) runs. On SQLite against raw C "
        + "libsqlite3 running the same SQL (goal within \(sqliteGoal)x); on LMDB and memory against the same answer "
        + "computed in app code through the typed API (goal: faster). \(load.finish().sentence) "
        + "Machine: \(machineDescription()).",
      "",
      "| operation | backend | Coffer | baseline | baseline time | ratio | goal | met |",
      "|---|---|---:|---|---:|---:|---|---|",
    ]
    for figure in figures {
      lines.append(
        "| \(figure.operation) | \(figure.engine) | \(time(figure.coffer)) | \(figure.baselineName) | "
          + "\(time(figure.baseline)) | "
          + String(format: "%.2fx", Measure.seconds(figure.coffer) / Measure.seconds(figure.baseline))
          + " | \(figure.goal) | \(figure.met ? "met" : "**not met**") |")
    }
    lines.append("")
    lines.append(
      "For one thread, eager loading makes the calls app code makes — the thread, then a limited page of its "
        + "messages, which an index on (thread, date) gives in order — so the two differ by microseconds. Its gain "
        + "is over many parents: one call per \(IncludingQuery<BenchThread, ChatMessage>.chunkSize) parents instead "
        + "of one per parent.")
    lines.append("")
    let text = lines.joined(separator: "\n")
    print(text)
    if write { try writeReport(text, named: "QueryModelSpeed.md", to: output) }
  }
}
