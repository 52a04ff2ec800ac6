import Foundation

/// `coffer-bench --ticket-profile SYSTEM OPERATION ROWS ROUNDS`: fills one system of the ticket
/// workload (by its name in the tables, such as `Coffer memory`) with ROWS tickets, then repeats
/// one operation ROUNDS times, for a profiler attached to the process or for a quick timing of
/// one change. Operations: `get`, `key`, `count` (1,000 calls each per round), `page` (100
/// project pages), `scan` (every ticket, once), `insert` (every ticket into a new store) and
/// `close` (10% of the tickets, two fields each, in one batch). Prints the fastest round and the mean; leaves no files.
enum TicketProfileLoop {
  static let flag = "--ticket-profile"

  static func run(_ arguments: [String]) async throws {
    let usage = UsageError(message: "\(flag) SYSTEM get|key|count|page|scan|insert|close ROWS ROUNDS")
    guard arguments.count == 4, let rows = Int(arguments[2]), let rounds = Int(arguments[3]), rows > 0,
      rounds > 0,
      let system = TicketBenchmark.makeSystems().first(where: { $0.name == arguments[0] })
    else { throw usage }
    let operation = arguments[1]
    guard ["get", "key", "count", "page", "scan", "insert", "close"].contains(operation) else { throw usage }
    let tickets = TicketWorkload.tickets(rows)
    let folder = try ScratchFolder("ticket-profile")
    defer { folder.remove() }
    try await system.create(in: folder.file("filled"))
    try await system.insert(tickets)
    var random = SplitMix64(state: 5)
    var checksum = 0
    var times: [Duration] = []
    let clock = ContinuousClock()
    for round in 0..<rounds {
      if operation == "insert" {
        try await system.create(in: folder.file("round-\(round)"))
      }
      let start = clock.now
      switch operation {
      case "get":
        for _ in 0..<1_000 {
          checksum &+= try await system.get(tickets[random.below(rows)].id) == nil ? 0 : 1
        }
      case "key":
        for _ in 0..<1_000 {
          checksum &+= try await system.ticket(key: tickets[random.below(rows)].key) == nil ? 0 : 1
        }
      case "count":
        for _ in 0..<1_000 {
          guard let person = tickets[random.below(rows)].assignee else { continue }
          checksum &+= try await system.assignedCount(person)
        }
      case "page":
        for _ in 0..<100 {
          let ticket = tickets[random.below(rows)]
          checksum &+= try await system.projectPage(ticket.projectID, status: ticket.status).count
        }
      case "scan":
        checksum &+= try await system.scan().count
      case "insert":
        try await system.insert(tickets)
      default:
        let closing = stride(from: round % 10, to: rows, by: 10).map { tickets[$0] }
        try await system.close(closing, at: Date(timeIntervalSince1970: 2_000_000_000 + Double(round)))
      }
      times.append(clock.now - start)
    }
    try await system.close()
    let milliseconds = times.map { Measure.seconds($0) * 1000 }
    let fastest = milliseconds.min() ?? 0
    let mean = milliseconds.reduce(0, +) / Double(milliseconds.count)
    say(
      "\(operation) on \(system.name), \(rows) tickets: fastest round \(fastest) ms, mean \(mean) ms (\(checksum))"
    )
  }
}
