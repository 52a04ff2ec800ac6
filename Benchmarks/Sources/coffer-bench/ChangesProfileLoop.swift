@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// `coffer-bench --changes-profile ENGINE on|off ROWS ROUNDS`: the change-feed benchmark's bulk
/// insert alone — ROWS rows in one batch into a new store, ROUNDS times, the feed on or off — so
/// that a profiler attached to the process sees it mostly alone. With `single` for ROWS, its
/// single commit alone instead: ROUNDS one-row inserts into one store holding 10,000 rows.
/// Prints the median time of a round; leaves no files.
enum ChangesProfileLoop {
  static let flag = "--changes-profile"

  static func run(_ arguments: [String]) async throws {
    guard arguments.count == 4, ["on", "off"].contains(arguments[1]),
      let rows = arguments[2] == "single" ? 0 : Int(arguments[2]), let rounds = Int(arguments[3]),
      rows >= 0, rounds > 0
    else {
      throw UsageError(message: "\(flag) ENGINE on|off ROWS|single ROUNDS")
    }
    let engine = arguments[0]
    let folder = try ScratchFolder("changes-profile")
    defer { folder.remove() }
    if rows == 0 {
      let median = try await singleCommits(engine, feed: arguments[1] == "on", rounds: rounds, folder: folder)
      print("\(engine), feed \(arguments[1]), single commit: median \(ChangesBenchmark.time(median)) a round")
      return
    }
    let source = RowSource(count: rows) { ChangesBenchmark.row(Int64($0)) }
    var store: Store?
    var round = 0
    let median = try await Measure.median(repetitions: rounds) {
      try await store?.close()
      round += 1
      let url = try ChangesBenchmark.url(
        engine, feed: arguments[1] == "on", name: "round-\(round)", folder: folder)
      let opened = try await Store.open(url: url, registry: .makeBuiltIn())
      try await opened.prepare(schemas: [ChangesBenchmark.schema])
      store = opened
    } _: {
      try await store?.apply(ChangeSet([.insertMany(entity: ChangesBenchmark.schema.name, rows: source)]))
    }
    try await store?.close()
    print("\(engine), feed \(arguments[1]), \(rows) rows: median \(ChangesBenchmark.time(median)) a round")
  }

  /// The median of `rounds` one-row inserts into one store that holds 10,000 rows.
  static func singleCommits(_ engine: String, feed: Bool, rounds: Int, folder: ScratchFolder) async throws
    -> Duration
  {
    let url = try ChangesBenchmark.url(engine, feed: feed, name: "single-\(feed)", folder: folder)
    let store = try await Store.open(url: url, registry: .makeBuiltIn())
    try await store.prepare(schemas: [ChangesBenchmark.schema])
    let rows = 10_000
    try await store.apply(
      ChangeSet([
        .insertMany(
          entity: ChangesBenchmark.schema.name,
          rows: RowSource(count: rows) { ChangesBenchmark.row(Int64($0)) })
      ]))
    var next = Int64(rows)
    let median = try await Measure.median(repetitions: rounds) {
      next += 1
      try await store.apply(
        ChangeSet([.insert(entity: ChangesBenchmark.schema.name, row: ChangesBenchmark.row(next))]))
    }
    try await store.close()
    return median
  }
}
