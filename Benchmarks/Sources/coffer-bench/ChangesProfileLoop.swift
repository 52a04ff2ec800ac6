@_spi(Backend) import Coffer
import CofferStores
import Foundation

/// `coffer-bench --changes-profile ENGINE on|off ROWS ROUNDS`: the change-feed benchmark's bulk
/// insert alone — ROWS rows in one batch into a new store, ROUNDS times, the feed on or off — so
/// that a profiler attached to the process sees it mostly alone. Prints the median time of a
/// round; leaves no files.
enum ChangesProfileLoop {
  static let flag = "--changes-profile"

  static func run(_ arguments: [String]) async throws {
    guard arguments.count == 4, ["on", "off"].contains(arguments[1]), let rows = Int(arguments[2]),
      let rounds = Int(arguments[3]), rows > 0, rounds > 0
    else {
      throw UsageError(message: "\(flag) ENGINE on|off ROWS ROUNDS")
    }
    let engine = arguments[0]
    let folder = try ScratchFolder("changes-profile")
    defer { folder.remove() }
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
}
