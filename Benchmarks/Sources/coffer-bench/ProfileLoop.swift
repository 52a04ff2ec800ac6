import Foundation

/// `coffer-bench --profile SYSTEM OPERATION ROWS ROUNDS`: fills one system with ROWS messages,
/// then repeats one operation (`scan`, `get` (1,000 of them), `page`, `update` of every tenth
/// message as the suite's update 10% does, or `insert` of all ROWS into a new store) ROUNDS times, so that a profiler attached to the process sees that
/// operation mostly alone. Prints the mean time per round; leaves no files.
enum ProfileLoop {
  static let flag = "--profile"

  static func run(_ arguments: [String]) async throws {
    guard arguments.count == 4, let system = SystemCatalog.make(arguments[0]), let rows = Int(arguments[2]),
      let rounds = Int(arguments[3]), rows > 0, rounds > 0
    else {
      throw UsageError(message: "\(flag) SYSTEM scan|get|page|update|insert ROWS ROUNDS")
    }
    let messages = Workload.messages(rows)
    let (tenth, edited) = Workload.tenthAndEdited(messages)
    let folder = try ScratchFolder("profile")
    defer { folder.remove() }
    try await system.create(in: folder.path)
    try await system.bulkInsert(messages)
    var random = SplitMix64(state: 3)
    var checksum: Int64 = 0
    let clock = ContinuousClock()
    let start = clock.now
    for round in 0..<rounds {
      switch arguments[1] {
      case "insert":
        // Each round inserts into a new store in a folder of its own; the last one stays open.
        try await system.close()
        let place = folder.file("round-\(round)")
        if round > 0 { try FileManager.default.removeItem(atPath: folder.file("round-\(round - 1)")) }
        try FileManager.default.createDirectory(atPath: place, withIntermediateDirectories: true)
        try await system.create(in: place)
        try await system.bulkInsert(messages)
      case "scan": checksum &+= Int64(try await system.scan().count)
      case "get":
        for _ in 0..<1_000 { checksum &+= try await system.get(messages[random.below(rows)].id)?.id ?? 0 }
      case "update": try await system.update(round % 2 == 0 ? edited : tenth)
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
