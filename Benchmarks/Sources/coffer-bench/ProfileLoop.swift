import Foundation

/// `coffer-bench --profile SYSTEM OPERATION ROWS ROUNDS`: fills one system with ROWS messages,
/// then repeats one read (`scan`, `get` or `page`) ROUNDS times, so that a profiler attached to
/// the process sees that operation alone. Prints the mean time per round; writes nothing.
enum ProfileLoop {
  static let flag = "--profile"

  static func run(_ arguments: [String]) async throws {
    guard arguments.count == 4, let system = SystemCatalog.make(arguments[0]), let rows = Int(arguments[2]),
      let rounds = Int(arguments[3]), rows > 0, rounds > 0
    else {
      throw UsageError(message: "\(flag) SYSTEM scan|get|page ROWS ROUNDS")
    }
    let messages = Workload.messages(rows)
    let folder = try ScratchFolder("profile")
    defer { folder.remove() }
    try await system.create(in: folder.path)
    try await system.bulkInsert(messages)
    var random = SplitMix64(state: 3)
    var checksum: Int64 = 0
    let clock = ContinuousClock()
    let start = clock.now
    for _ in 0..<rounds {
      switch arguments[1] {
      case "scan": checksum &+= Int64(try await system.scan().count)
      case "get":
        for _ in 0..<1_000 { checksum &+= try await system.get(messages[random.below(rows)].id)?.id ?? 0 }
      case "page":
        checksum &+= Int64(try await system.threadPage(Int64(random.below(Workload.threads))).count)
      default: throw UsageError(message: "\(flag): unknown operation \(arguments[1])")
      }
    }
    let elapsed = clock.now - start
    try await system.close()
    say(
      "\(arguments[1]) on \(system.name): \(Measure.seconds(elapsed) / Double(rounds) * 1000) ms per round (\(checksum))"
    )
  }
}
