@_spi(Backend) import Coffer
import CofferStores
import Foundation
import Synchronization

/// How soon a commit made by another process reaches a follower of the change feed in this
/// one (issue 43: p50 ≤ 5 ms, p99 ≤ 50 ms on SQLite, LMDB and PostgreSQL).
///
/// A child process (`coffer-bench --changes-writer URL COUNT`) opens the store and commits
/// `COUNT` one-row batches, one every 10 ms, noting the wall-clock time just after each commit
/// returns; this process follows the feed and notes the wall-clock time each batch arrives. The
/// latency of a batch is its arrival minus its commit; the first 10 are left out (the follower
/// and the writer warming up). Both processes read the same system clock.
enum ChangesWakeBenchmark {
  static let writerFlag = "--changes-writer"
  /// The batches the writer commits, and how many of the first are left out.
  static let commits = 300
  static let warmUp = 10
  static let pause = Duration.milliseconds(10)

  struct Figure {
    var engine: String
    var latencies: [Double]
    /// The load average over one minute when the measurement ended.
    var load: Double?

    func percentile(_ fraction: Double) -> Double {
      let sorted = latencies.sorted()
      guard !sorted.isEmpty else { return .nan }
      return sorted[min(sorted.count - 1, Int((Double(sorted.count) * fraction).rounded(.up)) - 1)]
    }
  }

  /// The wall-clock time in microseconds since 1970.
  static func now() -> Int64 { Int64((Date().timeIntervalSince1970 * 1_000_000).rounded()) }

  /// Follows a store's feed here while a child process commits to it.
  static func measure(_ engine: String, url: String) async throws -> Figure {
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: [ChangesBenchmark.schema])
    // The writer's first batch is the feed's first: the follower starts from an empty feed.
    try await store.recordChanges()
    let start = try await store.lastChangePosition()
    let arrivals = LockedArrivals()
    let follower = Task {
      for try await batch in store.changes(after: start, follow: true) {
        let arrived = now()
        for change in batch.changes { if case .int(let id) = change.id { arrivals.add(id, arrived) } }
        if arrivals.count >= commits { return }
      }
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    if !FileManager.default.fileExists(atPath: "/proc/self/exe") {
      process.executableURL = Bundle.main.executableURL
    }
    process.arguments = [writerFlag, url, String(commits)]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0 else {
      follower.cancel()
      throw BenchError("\(engine): the writer process failed: \(text)")
    }
    var committed: [Int64: Int64] = [:]
    for line in text.split(separator: "\n") {
      let parts = line.split(separator: " ")
      guard parts.count == 2, let id = Int64(parts[0]), let micros = Int64(parts[1]) else { continue }
      committed[id] = micros
    }
    let deadline = ContinuousClock.now + .seconds(30)
    while arrivals.count < commits, ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    follower.cancel()
    _ = try? await follower.value
    try await store.close()
    let seen = arrivals.all
    guard committed.count == commits, seen.count == commits else {
      throw BenchError(
        "\(engine): the writer committed \(committed.count) batches, the follower saw \(seen.count)")
    }
    let latencies = (Int64(warmUp)..<Int64(commits)).compactMap { id -> Double? in
      guard let sent = committed[id], let arrived = seen[id] else { return nil }
      return Double(arrived - sent) / 1000
    }
    return Figure(engine: engine, latencies: latencies, load: loadAverage())
  }

  /// The child's side: commits `COUNT` one-row batches to `URL`, one every 10 ms, and prints
  /// each batch's id and the time its commit returned.
  static func writer(_ arguments: [String]) async throws {
    guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
      throw BenchError("usage: coffer-bench \(writerFlag) URL COUNT")
    }
    let store = try await Store.open(url: arguments[0], registry: .makeBuiltIn())
    try await store.prepare(schemas: [ChangesBenchmark.schema])
    var lines: [String] = []
    lines.reserveCapacity(count)
    for id in 0..<Int64(count) {
      try await Task.sleep(for: pause)
      try await store.apply(
        ChangeSet([.insert(entity: ChangesBenchmark.schema.name, row: ChangesBenchmark.row(id))]))
      lines.append("\(id) \(now())")
    }
    try await store.close()
    print(lines.joined(separator: "\n"))
  }

  /// The arrival time of each batch the follower saw, by the id of its row.
  final class LockedArrivals: Sendable {
    private let times = Mutex<[Int64: Int64]>([:])
    func add(_ id: Int64, _ micros: Int64) { times.withLock { $0[id] = $0[id] ?? micros } }
    var count: Int { times.withLock { $0.count } }
    var all: [Int64: Int64] { times.withLock { $0 } }
  }
}

/// The system's load average over the last minute, from `/proc/loadavg`; `nil` where there is
/// none.
func loadAverage() -> Double? {
  guard let text = try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8) else { return nil }
  return text.split(separator: " ").first.flatMap { Double($0) }
}
