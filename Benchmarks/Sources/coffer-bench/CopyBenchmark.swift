import Coffer
import CofferStores
import CofferTools
import Foundation

/// The copy benchmark: `StoreCopier` copying the workload's chat messages from one store to
/// another, for each pair of engines, against what each engine's raw C library takes to read
/// every row and bulk-insert them, and the peak memory of the copy.
///
/// For each pair, in one run: the source is filled through Coffer (not timed); the copy runs
/// twice in a child process of its own (``CopyProbe``) into a new target, with verification and
/// without; then each side's baseline runs on the same messages — a read of every row plus a
/// bulk insert in one transaction, with raw C libsqlite3 or raw C liblmdb, or for a property list
/// (no C library) `PropertyListDecoder` of the whole file plus a `PropertyListEncoder` rewrite.
/// The goal: a copy at least 70% as fast as the slower side's baseline, and under 150 MiB of
/// memory growth during the copy.
///
/// `coffer-bench --copy [--copy-rows N] [--copy-pairs sqlite-lmdb,lmdb-sqlite,plist-sqlite]
/// [--copy-batch N] [--output DIR] [--no-write]`
enum CopyBenchmark {
  static let flag = "--copy"
  /// The copy's rate must be at least this fraction of the slower side's raw rate.
  static let rateGoal = 0.70
  /// The copy process's memory must grow by less than this during the copy.
  static let memoryGoal: Int64 = 150 << 20
  /// The copy without verification runs only when the verified one took less than this many
  /// seconds: it is a second copy of everything, worth its time only when it is cheap.
  static let unverifiedBudget = 60.0

  /// A store engine a copy reads from or writes to.
  enum Engine: String, CaseIterable, Sendable {
    case sqlite, lmdb, plist

    /// The name in tables.
    var title: String {
      switch self {
      case .sqlite: "SQLite"
      case .lmdb: "LMDB"
      case .plist: "plist (binary)"
      }
    }

    /// The Coffer store URL of a store called `name` in `folder` (an absolute path).
    func url(in folder: String, name: String) -> String {
      switch self {
      case .sqlite: "sqlite://\(folder)/\(name).sqlite"
      case .lmdb: "lmdb://\(folder)/\(name)-lmdb"
      case .plist: "plist://\(folder)/\(name).plist?format=binary"
      }
    }

    /// What the baseline of this engine does.
    var baseline: String {
      switch self {
      case .sqlite:
        "raw C libsqlite3: `SELECT` of every row, decoded, + one-transaction `INSERT` with a prepared statement"
      case .lmdb:
        "raw C liblmdb: cursor walk, decoded, + `mdb_put` of every row and its (thread, date) index entry in one transaction"
      case .plist:
        "`PropertyListDecoder` of the whole binary file + `PropertyListEncoder` rewrite with fsync (no raw C library for plists: the suite's `NaivePlistStore`)"
      }
    }

    /// The baseline's name in tables.
    var baselineName: String {
      switch self {
      case .sqlite: "raw C libsqlite3"
      case .lmdb: "raw C liblmdb"
      case .plist: "PropertyListDecoder/Encoder"
      }
    }
  }

  /// A source and a target engine, written `sqlite-lmdb` on the command line.
  struct Pair: Sendable {
    var source: Engine
    var target: Engine

    /// `sqlite-lmdb`.
    var key: String { "\(source.rawValue)-\(target.rawValue)" }
    /// `SQLite → LMDB`.
    var title: String { "\(source.title) → \(target.title)" }

    /// The pair from `source` to `target`.
    init(_ source: Engine, _ target: Engine) { (self.source, self.target) = (source, target) }

    /// The pair a key such as `sqlite-lmdb` names.
    init(_ key: String) throws {
      let parts = key.split(separator: "-").map(String.init)
      guard parts.count == 2, let source = Engine(rawValue: parts[0]),
        let target = Engine(rawValue: parts[1]),
        source != target
      else {
        throw UsageError(
          message: "--copy-pairs: \(key) is not SOURCE-TARGET of two different engines among "
            + Engine.allCases.map(\.rawValue).joined(separator: ", "))
      }
      self.init(source, target)
    }
  }

  /// An engine's baseline: seconds to read every row and to insert them all.
  struct Baseline {
    /// Seconds to read every row, decoded into messages.
    var read: Double
    /// Seconds to insert every row into a new store in one transaction.
    var insert: Double
    /// Rows per second through a read of every row followed by a bulk insert of them.
    func rate(_ rows: Int) -> Double { Double(rows) / (read + insert) }
  }

  /// Everything one pair measured.
  struct PairResult {
    /// The source and the target engine.
    var pair: Pair
    /// Seconds to fill the source through Coffer (not part of any figure the goal judges).
    var fillSeconds: Double
    /// The copy with verification.
    var verified: CopyMeasurement
    /// The copy without verification; nil when the verified copy took longer than
    /// ``unverifiedBudget`` and the second copy was left out.
    var unverified: CopyMeasurement?
    /// The source engine's baseline.
    var source: Baseline
    /// The target engine's baseline.
    var target: Baseline
  }

  /// What the command line asked for.
  struct Settings {
    /// Messages to copy (`--copy-rows`).
    var rows = 1_000_000
    /// The pairs to measure, in order (`--copy-pairs`).
    var pairs = [Pair(.sqlite, .lmdb), Pair(.lmdb, .sqlite), Pair(.plist, .sqlite)]
    /// The copier's batch size from `--copy-batch`, or nil for `StoreCopier`'s default.
    var batchSize: Int?
    /// Where Copy.md goes (`--output`), or nil for the repository's Docs folder.
    var output: String?
    /// Whether to write Copy.md (`--no-write` turns it off).
    var write = true

    /// Parses the arguments after `--copy`.
    init(_ arguments: [String]) throws {
      var iterator = arguments.makeIterator()
      while let argument = iterator.next() {
        func number() throws -> Int {
          guard let text = iterator.next(), let value = Int(text), value > 0 else {
            throw UsageError(message: "\(argument) needs a positive number")
          }
          return value
        }
        switch argument {
        case "--copy-rows": rows = try number()
        case "--copy-batch": batchSize = try number()
        case "--copy-pairs":
          guard let text = iterator.next() else { throw UsageError(message: "--copy-pairs needs a list") }
          pairs = try text.split(separator: ",").map { try Pair(String($0)) }
        case "--output":
          guard let directory = iterator.next() else { throw UsageError(message: "--output needs a folder") }
          output = directory
        case "--no-write": write = false
        default: throw UsageError(message: "unknown argument \(argument) for \(CopyBenchmark.flag)")
        }
      }
    }
  }

  /// Runs the pairs, prints every figure and writes DIR/Copy.md.
  static func run(_ arguments: [String]) async throws {
    let settings = try Settings(arguments)
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    say(
      "coffer-bench: copy, \(settings.rows.formatted()) messages, "
        + (settings.batchSize.map { "batches of \($0)" } ?? "the copier's default batch size"))
    let messages = Workload.messages(settings.rows)
    let checksum = Self.checksum(messages)
    var results: [PairResult] = []
    for pair in settings.pairs {
      results.append(
        try await measure(pair, messages: messages, checksum: checksum, batchSize: settings.batchSize))
    }
    let lines = report(results, settings: settings, command: command, load: load.finish())
    let text = lines.joined(separator: "\n")
    print(text)
    if settings.write { try writeReport(text, named: "Copy.md", to: settings.output) }
  }

  /// Fills the pair's source, copies it twice (with and without verification), then runs both
  /// sides' baselines.
  static func measure(_ pair: Pair, messages: [ChatMessage], checksum: Int64, batchSize: Int?) async throws
    -> PairResult
  {
    let folder = try ScratchFolder("copy-\(pair.key)")
    defer { folder.remove() }
    let rows = messages.count
    let sourceURL = pair.source.url(in: folder.path, name: "source")

    let fillSeconds = try await seconds {
      let store = try await Store.open(url: sourceURL, registry: .makeBuiltIn())
      try await store.prepare([ChatMessage.self])
      try await store.insert(messages)
      try await store.close()
    }
    say("\(pair.title): source filled through Coffer in \(String(format: "%.2f s", fillSeconds)) (not timed)")

    var copies: [CopyMeasurement] = []
    for verify in [true, false] {
      if !verify, let verified = copies.first, verified.copySeconds >= unverifiedBudget {
        say(
          "\(pair.title): copy without verification left out: the verified copy took more than "
            + "\(Int(unverifiedBudget)) s")
        break
      }
      let targetFolder = folder.file(verify ? "verified" : "unverified")
      try FileManager.default.createDirectory(atPath: targetFolder, withIntermediateDirectories: true)
      let copy = try CopyProbe.measure(
        source: sourceURL, target: pair.target.url(in: targetFolder, name: "target"), verify: verify,
        batchSize: batchSize)
      try? FileManager.default.removeItem(atPath: targetFolder)
      guard copy.rowsCopied == rows else {
        throw BenchError("\(pair.title): the copy inserted \(copy.rowsCopied) rows of \(rows)")
      }
      guard copy.verified || !verify else {
        throw BenchError(
          "\(pair.title): the copy's digests differ: \(copy.differences.joined(separator: " "))")
      }
      say(
        String(
          format:
            "%@: copy%@ %.2f s, %.0f rows/s; opening both stores %.2f s; resident growth %@, anonymous %@",
          pair.title, verify ? " (verified)" : " (not verified)", copy.copySeconds,
          Double(rows) / copy.copySeconds, copy.openSeconds, mib(copy.residentGrowth),
          mib(copy.anonymousGrowth)))
      copies.append(copy)
    }

    var baselines: [Baseline] = []
    for engine in [pair.source, pair.target] {
      let place = folder.file("baseline-\(engine.rawValue)")
      try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
      let baseline = try await Self.baseline(engine, messages: messages, checksum: checksum, in: place)
      try? FileManager.default.removeItem(atPath: place)
      say(
        String(
          format: "%@: %@ read-all %.2f s + bulk insert %.2f s, %.0f rows/s", pair.title,
          engine.baselineName, baseline.read, baseline.insert, baseline.rate(rows)))
      baselines.append(baseline)
    }
    return PairResult(
      pair: pair, fillSeconds: fillSeconds, verified: copies[0],
      unverified: copies.count > 1 ? copies[1] : nil, source: baselines[0],
      target: baselines[1])
  }

  /// Times the engine's bulk insert of `messages` into a new store in `folder`, then its read of
  /// every row (checked against `checksum`).
  static func baseline(_ engine: Engine, messages: [ChatMessage], checksum: Int64, in folder: String)
    async throws -> Baseline
  {
    var read: [ChatMessage] = []
    let result: Baseline
    switch engine {
    case .sqlite, .lmdb:
      let system: any BenchSystem = engine == .sqlite ? RawSQLiteSystem() : RawLMDBSystem()
      try await system.create(in: folder)
      let insert = try await seconds { try await system.bulkInsert(messages) }
      let readSeconds = try await seconds { read = try await system.scan() }
      try await system.close()
      result = Baseline(read: readSeconds, insert: insert)
    case .plist:
      let path = folder + "/naive.plist"
      let insert = try await seconds { try NaivePlistStore(path: path, messages: messages).save() }
      let readSeconds = try await seconds { read = try NaivePlistStore.open(path).messages }
      result = Baseline(read: readSeconds, insert: insert)
    }
    guard read.count == messages.count, Self.checksum(read) == checksum else {
      throw BenchError("\(engine.baselineName) read back \(read.count) messages, not the ones inserted")
    }
    return result
  }

  /// A sum over every message's fields, to check a read-all gave back what was inserted.
  static func checksum(_ messages: [ChatMessage]) -> Int64 {
    messages.reduce(0) { sum, message in
      sum &+ message.id &* 31 &+ message.threadID &* 7 &+ Int64(message.text.utf8.count)
        &+ Int64(message.sender.utf8.count) &+ Int64((message.date.timeIntervalSince1970 * 1e6).rounded())
        &+ (message.isRead ? 1 : 0)
    }
  }

  // MARK: - The report

  /// The lines of Copy.md.
  static func report(_ results: [PairResult], settings: Settings, command: String, load: MachineLoad.Result)
    -> [String]
  {
    let rows = settings.rows
    let batchSize = results.first?.verified.batchSize ?? settings.batchSize ?? 0
    var lines = [
      "# Copy",
      "",
      "Written by `\(command)`; every figure below was printed by that run.",
      "Machine: \(machineDescription()). \(load.sentence)",
      "",
      coreState(),
      "",
      "`StoreCopier.run()` copying \(rows.formatted()) chat messages (the suite's `ChatMessage`, made from the",
      "fixed seed before any timing) from a store filled through Coffer (not timed) into a new one, in",
      "batches of \(batchSize.formatted()) rows. Each copy runs once with verification (the two",
      "stores' digests compared: the copy's default) and once without (`verify = false`), each in a fresh",
      "child process of coffer-bench that opens both stores and runs the copy, nothing else; its time is",
      "that of `run()` alone — opening the stores (for a property list, loading the whole file) is shown",
      "apart. SQLite stores use WAL and `synchronous = FULL`, every LMDB commit is synced, the property",
      "list is binary and written with fsync; the baselines use the same settings.",
      "",
      "The goal: a copy's rate at least \(Int(rateGoal * 100))% of the slower side's baseline rate — for",
      "each engine, rows ÷ (time to read every row + time to insert them all in one transaction) with the",
      "lowest layer there is, measured in the same run on the same messages — and the copy process's",
      "memory growing by less than \(memoryGoal >> 20) MiB during the copy. Every run is measured once;",
      "the copy without verification is left out when the verified one takes \(Int(unverifiedBudget)) s or more.",
      "",
      "Baselines:",
      "",
    ]
    let engines = Engine.allCases.filter { engine in
      results.contains { $0.pair.source == engine || $0.pair.target == engine }
    }
    for engine in engines { lines.append("- \(engine.title): \(engine.baseline).") }
    lines += [
      "",
      "Memory: the child's resident size is read from `/proc/self/status` after opening both stores;",
      "then 5 is written to `/proc/self/clear_refs`, which resets the kernel's high-water mark (`VmHWM`)",
      "to that size, and `VmHWM` is read again when `run()` returns. *Resident growth* is the difference:",
      "every page the process had resident at the peak, mapped files included (LMDB reads and writes",
      "through a memory map of its file, whose pages count here while they are mapped). *Anonymous",
      "growth* is the same without file-backed pages — the heap: rows, batches, SQLite's page cache —",
      "from `/proc/self/statm` sampled every 5 ms during the copy (a peak between samples can be missed).",
      "The goal is judged on resident growth, the stricter of the two; anonymous growth is judged beside it.",
      "",
      "## Summary",
      "",
      "| pair | copy, verified | rows/s | slower side's baseline | ratio | ≥ \(Int(rateGoal * 100))%? "
        + "| resident growth | < \(memoryGoal >> 20) MiB? | anonymous growth | < \(memoryGoal >> 20) MiB? |",
      "|---|---:|---:|---:|---:|---|---:|---|---:|---|",
    ]
    for result in results {
      let copyRate = Double(rows) / result.verified.copySeconds
      let (slowerName, slowerRate) = slower(result, rows: rows)
      let ratio = copyRate / slowerRate
      lines.append(
        "| \(result.pair.title) | \(duration(result.verified.copySeconds)) | \(rate(copyRate)) | "
          + "\(rate(slowerRate)) (\(slowerName)) | \(String(format: "%.2f", ratio)) | \(verdict(ratio >= rateGoal)) | "
          + "\(memoryFigure(result.verified)) | \(memoryVerdict(result.verified)) | "
          + "\(mib(result.verified.anonymousGrowth)) | \(anonymousVerdict(result.verified)) |")
    }
    lines.append("")
    for result in results { lines += pairSection(result, rows: rows) }
    return lines
  }

  /// The section of one pair: its times, rates and ratios, then its memory.
  static func pairSection(_ result: PairResult, rows: Int) -> [String] {
    let pair = result.pair
    let (slowerName, slowerRate) = slower(result, rows: rows)
    var lines = [
      "## \(pair.title)",
      "",
      "\(rows.formatted()) rows; the source was filled through Coffer in \(duration(result.fillSeconds)) (not timed).",
      "",
      "| | time | rows/s | ÷ slower side's baseline | goal ≥ \(Int(rateGoal * 100))% |",
      "|---|---:|---:|---:|---|",
    ]
    let copies = [("verified", result.verified)] + (result.unverified.map { [("not verified", $0)] } ?? [])
    for (name, copy) in copies.map({ ("copy, \($0.0)", $0.1) }) {
      let copyRate = Double(rows) / copy.copySeconds
      lines.append(
        "| \(name) (`run()`) | \(duration(copy.copySeconds)) | \(rate(copyRate)) | "
          + "\(String(format: "%.2f", copyRate / slowerRate)) | \(verdict(copyRate / slowerRate >= rateGoal)) |"
      )
    }
    for (name, copy) in copies {
      lines.append(
        "| copy, \(name), until its last batch was reported (every row in the target) | \(duration(copy.rowsSeconds)) "
          + "| | | |")
      if copy.copySeconds - copy.rowsSeconds >= 0.005 {
        lines.append(
          "| copy, \(name), after its last batch (comparing the digests) | "
            + "\(duration(copy.copySeconds - copy.rowsSeconds)) | | | |")
      }
    }
    let openedRate = Double(rows) / (result.verified.copySeconds + result.verified.openSeconds)
    lines.append(
      "| copy, verified, with opening both stores (\(duration(result.verified.openSeconds))) | "
        + "\(duration(result.verified.copySeconds + result.verified.openSeconds)) | \(rate(openedRate)) | "
        + "\(String(format: "%.2f", openedRate / slowerRate)) | (for reference) |")
    for (side, engine, baseline) in [
      ("source", pair.source, result.source), ("target", pair.target, result.target),
    ] {
      lines.append(
        "| \(side): \(engine.baselineName), read-all \(duration(baseline.read)) + bulk insert "
          + "\(duration(baseline.insert)) | \(duration(baseline.read + baseline.insert)) | "
          + "\(rate(baseline.rate(rows))) | | |")
    }
    lines += [
      "",
      "The slower side: \(slowerName), \(rate(slowerRate)) rows/s. In the verified copy, the first tenth of the",
      "rows took \(duration(result.verified.firstTenthSeconds)), the last tenth "
        + "\(duration(result.verified.lastTenthSeconds)).",
      "",
    ]
    if result.unverified == nil {
      lines.append(
        "The copy without verification was left out: the verified one took \(Int(unverifiedBudget)) s or more."
      )
      lines.append("")
    }
    func row(_ name: String, _ figure: (CopyMeasurement) -> String) -> String {
      "| \(name) | " + copies.map { figure($0.1) }.joined(separator: " | ") + " |"
    }
    lines += [
      "| memory of the copy process | " + copies.map(\.0).joined(separator: " | ") + " |",
      "|---|" + copies.map { _ in "---:|" }.joined(),
      row("resident at start (before opening the stores)") { mib($0.residentAtStart) },
      row("resident after opening both stores") { mib($0.residentAfterOpen) },
      row("peak resident during the copy (`VmHWM` after the reset)") { mib($0.peakDuringCopy) },
      row("**resident growth during the copy**") { "**\(memoryFigure($0))**" },
      row("goal < \(memoryGoal >> 20) MiB") { memoryVerdict($0) },
      row("anonymous growth during the copy (sampled every 5 ms)") { mib($0.anonymousGrowth) },
      row("goal < \(memoryGoal >> 20) MiB, anonymous") { anonymousVerdict($0) },
      row("file-mapped pages resident after the copy") { mib($0.fileMappedAfterCopy) },
      row("peak resident from the process's start through opening") { mib($0.peakThroughOpen) },
      "",
    ]
    return lines
  }

  /// Which state of the library the run measured, as git tells it when the run ends: the commit
  /// checked out and the files under Sources/ that differ from it (the build is made from the
  /// working tree, so its uncommitted changes are in the figures).
  static func coreState() -> String {
    let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().deletingLastPathComponent().path
    func git(_ arguments: [String]) -> String? {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["git", "-C", repository] + arguments
      let output = Pipe()
      process.standardOutput = output
      process.standardError = FileHandle.nullDevice
      guard (try? process.run()) != nil else { return nil }
      let data = output.fileHandleForReading.readDataToEndOfFile()
      process.waitUntilExit()
      guard process.terminationStatus == 0 else { return nil }
      // Only the final newline goes: a status line starts with a space for a change not staged.
      var text = String(decoding: data, as: UTF8.self)
      if text.hasSuffix("\n") { text.removeLast() }
      return text
    }
    guard let commit = git(["rev-parse", "--short", "HEAD"]) else {
      return "Library: not in a git checkout; the state measured is unknown."
    }
    let changed = (git(["status", "--porcelain", "--", "Sources"]) ?? "").split(separator: "\n")
      .map { String($0.dropFirst(3)) }
    guard !changed.isEmpty else { return "Library: commit \(commit), no uncommitted changes under Sources/." }
    return "Library: commit \(commit) with uncommitted changes, in the build, to "
      + changed.map { "`\($0)`" }.joined(separator: ", ") + "."
  }

  /// The name and rate of the side whose baseline is slower.
  static func slower(_ result: PairResult, rows: Int) -> (String, Double) {
    let source = result.source.rate(rows)
    let target = result.target.rate(rows)
    return source <= target
      ? ("source, \(result.pair.source.baselineName)", source)
      : ("target, \(result.pair.target.baselineName)", target)
  }

  /// "met", or "not met" in bold.
  static func verdict(_ met: Bool) -> String { met ? "met" : "**not met**" }

  /// The resident growth of a copy, as the tables show it.
  static func memoryFigure(_ copy: CopyMeasurement) -> String {
    guard copy.memoryMeasured else { return "not measured" }
    return mib(copy.residentGrowth) + (copy.peakWasReset ? "" : " (since the process started: no reset)")
  }

  /// Whether the resident growth meets the memory goal.
  static func memoryVerdict(_ copy: CopyMeasurement) -> String {
    copy.memoryMeasured ? verdict(copy.residentGrowth < memoryGoal) : "—"
  }

  /// Whether the sampled anonymous growth meets the memory goal.
  static func anonymousVerdict(_ copy: CopyMeasurement) -> String {
    copy.memoryMeasured && copy.samples > 0 ? verdict(copy.anonymousGrowth < memoryGoal) : "—"
  }

  /// Bytes in MiB, one decimal.
  static func mib(_ bytes: Int64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }
  /// Seconds, two decimals.
  static func duration(_ seconds: Double) -> String { String(format: "%.2f s", seconds) }
  /// Rows per second, whole, grouped.
  static func rate(_ rowsPerSecond: Double) -> String { Int(rowsPerSecond.rounded()).formatted() }

  /// Wall time of `body`, in seconds.
  static func seconds(_ body: () async throws -> Void) async throws -> Double {
    let clock = ContinuousClock()
    let start = clock.now
    try await body()
    return Measure.seconds(clock.now - start)
  }
}

/// How busy the machine was with other work while the benchmark ran: all CPU time the kernel
/// counted as busy (`/proc/stat`) minus this process's and its children's, over the wall time.
struct MachineLoad {
  private let start = ContinuousClock.now
  private let busyAtStart = MachineLoad.busySeconds()
  private let oursAtStart = MachineLoad.ownSeconds()

  /// What the run saw.
  struct Result {
    /// Cores' worth of CPU other processes used on average, or nil without `/proc/stat`.
    var others: Double?
    /// Cores' worth this process and its children used on average.
    var ours: Double
    /// This process's nice value.
    var nice: Int?

    /// One sentence for the report.
    var sentence: String {
      let niceText = nice.map { ", this process at nice \($0)" } ?? ""
      guard let others else {
        return String(format: "Load: this run used %.2f cores on average%@.", ours, niceText)
      }
      let shared = others >= 0.1 ? "The machine was shared: " : "The machine was otherwise idle: "
      return shared
        + String(
          format: "other processes used %.2f of its %d cores on average during the run, this run %.2f%@.",
          others, ProcessInfo.processInfo.activeProcessorCount, ours, niceText)
    }
  }

  /// The load since this value was made.
  func finish() -> Result {
    let wall = Measure.seconds(ContinuousClock.now - start)
    let ours = (Self.ownSeconds() - oursAtStart) / wall
    var others: Double?
    if let busyAtStart, let busyNow = Self.busySeconds() {
      others = max(0, (busyNow - busyAtStart) / wall - ours)
    }
    return Result(others: others, ours: ours, nice: Self.nice())
  }

  /// Busy CPU seconds of every core since boot: user, nice, system, irq, softirq and steal.
  static func busySeconds() -> Double? {
    guard let stat = try? String(contentsOfFile: "/proc/stat", encoding: .utf8),
      let line = stat.split(separator: "\n").first, line.hasPrefix("cpu ")
    else { return nil }
    let ticks = line.split(separator: " ").dropFirst().compactMap { Double($0) }
    guard ticks.count >= 8 else { return nil }
    let busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6] + ticks[7]
    return busy / Double(sysconf(Int32(_SC_CLK_TCK)))
  }

  /// CPU seconds used by this process and its children that have been waited for.
  static func ownSeconds() -> Double {
    func seconds(_ who: Int32) -> Double {
      var usage = rusage()
      #if os(Linux)
        getrusage(__rusage_who_t(who), &usage)
      #else
        getrusage(who, &usage)
      #endif
      return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }
    #if os(Linux)
      return seconds(RUSAGE_SELF.rawValue) + seconds(RUSAGE_CHILDREN.rawValue)
    #else
      return seconds(RUSAGE_SELF) + seconds(RUSAGE_CHILDREN)
    #endif
  }

  /// The nice value from `/proc/self/stat` (the 19th field), or nil without it.
  static func nice() -> Int? {
    guard let stat = try? String(contentsOfFile: "/proc/self/stat", encoding: .utf8),
      let end = stat.lastIndex(of: ")")
    else { return nil }
    let fields = stat[stat.index(after: end)...].split(separator: " ")
    return fields.count > 16 ? Int(fields[16]) : nil
  }
}
