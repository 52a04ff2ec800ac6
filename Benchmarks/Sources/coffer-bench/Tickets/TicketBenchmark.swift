import Foundation

/// `coffer-bench --tickets [--ticket-rows N,N,…] [--repetitions N] [--ticket-systems NAME,…]
/// [--output DIR] [--no-write]`: the second workload, issue-tracker tickets, on each Coffer
/// backend and on what it is measured against, all in one run. Every system answers every call,
/// and the run stops when two systems answer a call differently. Writes the ticket part of
/// Docs/Performance.md (see ``PerformanceSections``).
enum TicketBenchmark {
  static let flag = "--tickets"

  /// What the run measures, in the order it runs.
  enum Operation: String, CaseIterable {
    case insert = "bulk insert"
    case get = "get by id"
    case key = "get by unique key"
    case page = "project page (compound index + sort)"
    case urgent = "urgent (no index, sort, limit 100)"
    case count = "count by indexed field"
    case sum = "sum of a project's open estimates"
    case scan = "full scan"
    case close = "close 10% (two fields)"
    case delete = "delete a project's closed tickets"

    func detail(rows: Int) -> String {
      switch self {
      case .insert: "\(rows.formatted()) tickets in one batch, once"
      case .get, .key, .count: "per call, mean of \(calls.formatted())"
      case .page, .sum: "per call, mean of \(heavyCalls.formatted())"
      case .urgent, .scan, .delete: "per call"
      case .close: "\((rows / 10).formatted()) tickets in one batch"
      }
    }
  }

  /// A Coffer backend and its limit: the ratio the issue sets, and the peer Coffer must beat.
  struct Pair {
    var system: String
    var baseline: String
    var goal: Double
    var strict: Bool
  }

  static let pairs = [
    Pair(system: "Coffer sqlite", baseline: "raw C libsqlite3", goal: 1.5, strict: false),
    Pair(system: "Coffer sqlite", baseline: "GRDB records", goal: 1.0, strict: true),
    Pair(system: "Coffer lmdb", baseline: "Coffer sqlite", goal: 1.0, strict: false),
    Pair(system: "Coffer memory", baseline: "Coffer lmdb", goal: 1.0, strict: false),
    Pair(system: "Coffer lmdb", baseline: "raw C liblmdb", goal: 1.5, strict: false),
    Pair(system: "Coffer sqlite", baseline: "Fluent SQLite", goal: 1.0, strict: true),
  ]

  static func makeSystems() -> [any TicketSystem] {
    [
      CofferTicketSystem(name: "Coffer sqlite", scheme: "sqlite", file: "tickets.sqlite"),
      CofferTicketSystem(name: "Coffer lmdb", scheme: "lmdb", file: "tickets-lmdb"),
      CofferTicketSystem(name: "Coffer memory", scheme: "memory", file: ""),
      RawSQLiteTicketSystem(),
      GRDBTicketSystem(),
      RawLMDBTicketSystem(),
      FluentTicketSystem(),
    ]
  }

  static func run(_ arguments: [String]) async throws {
    var sizes = [100_000]
    var repetitions = 5
    var chosen: Set<String>?
    var output: String?
    var write = true
    var iterator = arguments.makeIterator()
    while let argument = iterator.next() {
      switch argument {
      case "--ticket-rows":
        sizes = (iterator.next() ?? "").split(separator: ",").compactMap { Int($0) }
        guard !sizes.isEmpty, sizes.allSatisfy({ $0 >= 1_000 }) else {
          throw UsageError(message: "--ticket-rows needs numbers of at least 1000")
        }
      case "--repetitions":
        guard let number = iterator.next().flatMap(Int.init), number > 0,
          number <= TicketWorkload.projectCount
        else {
          throw UsageError(message: "--repetitions needs a number from 1 to \(TicketWorkload.projectCount)")
        }
        repetitions = number
      case "--ticket-systems":
        chosen = Set((iterator.next() ?? "").split(separator: ",").map(String.init))
      case "--output": output = iterator.next()
      case "--no-write": write = false
      default: throw UsageError(message: "unknown argument \(argument) for \(flag)")
      }
    }
    let command = benchCommand(flag, arguments)
    let load = MachineLoad()
    var tables: [String] = []
    for rows in sizes {
      let systems = makeSystems().filter { chosen?.contains($0.name) ?? true }
      tables += try await measure(rows: rows, repetitions: repetitions, systems: systems)
    }
    let text = report(tables, command: command, repetitions: repetitions, load: load.finish())
    print(text)
    if write { try PerformanceSections.write(text, as: .tickets, to: reportDirectory(output)) }
  }

  /// Calls per repetition of the lookups measured per call.
  static let calls = 500
  /// Calls per repetition of the pages and sums, which read hundreds or thousands of rows each.
  static let heavyCalls = 50

  /// Runs every operation on every system, the systems taking turns within each repetition;
  /// returns the report's lines for this size.
  static func measure(rows: Int, repetitions: Int, systems: [any TicketSystem]) async throws -> [String] {
    say("coffer-bench: tickets, \(rows.formatted()) rows, \(systems.map(\.name).joined(separator: ", "))")
    let tickets = TicketWorkload.tickets(rows)
    let folder = try ScratchFolder("tickets")
    defer { folder.remove() }
    var random = SplitMix64(state: 99)
    let sample = (0..<calls).map { _ in tickets[random.below(rows)] }
    let pages = (0..<calls).map { _ in
      (TicketWorkload.projects[random.below(TicketWorkload.projectCount)], Int64(random.below(5)))
    }
    let people = (0..<calls).map { _ in TicketWorkload.people[random.below(TicketWorkload.peopleCount)] }
    let closing = stride(from: 0, to: rows, by: 10).map { tickets[$0] }
    let closedAt = TicketWorkload.date(1_800_000_000_000_000)

    var times: [Operation: [String: [Double]]] = [:]
    var sizes: [String: Int64] = [:]
    func record(_ operation: Operation, _ system: String, _ seconds: Double) {
      times[operation, default: [:]][system, default: []].append(seconds)
    }
    let clock = ContinuousClock()
    func timed<T>(_ body: () async throws -> T) async throws -> (T, Double) {
      let start = clock.now
      let value = try await body()
      return (value, Measure.seconds(clock.now - start))
    }

    for system in systems {
      try await system.create(in: folder.path)
      let (_, seconds) = try await timed { try await system.insert(tickets) }
      record(.insert, system.name, seconds)
      say("  \(system.name): inserted in \(String(format: "%.2f", seconds)) s")
    }
    for repetition in 0..<repetitions {
      // The earlier repetitions deleted the closed tickets of their projects, those closed here included.
      let deleted = Set(TicketWorkload.projects.prefix(repetition))
      let closing = closing.filter { !deleted.contains($0.projectID) }
      var answers: [Operation: [String: String]] = [:]
      for system in systems {
        var answer: [Operation: String] = [:]
        var (found, seconds) = try await timed {
          var keys: [String] = []
          for ticket in sample { keys.append(try await system.get(ticket.id)?.key ?? "-") }
          return keys
        }
        record(.get, system.name, seconds / Double(calls))
        answer[.get] = found.joined(separator: ",")
        (found, seconds) = try await timed {
          var ids: [String] = []
          for ticket in sample { ids.append(try await system.ticket(key: ticket.key)?.id.uuidString ?? "-") }
          return ids
        }
        record(.key, system.name, seconds / Double(calls))
        answer[.key] = found.joined(separator: ",")
        (found, seconds) = try await timed {
          var keys: [String] = []
          for (project, status) in pages.prefix(heavyCalls) {
            keys.append(
              try await system.projectPage(project, status: status).map(\.key).joined(separator: " "))
          }
          return keys
        }
        record(.page, system.name, seconds / Double(heavyCalls))
        answer[.page] = found.joined(separator: ",")
        let (urgent, urgentSeconds) = try await timed { try await system.urgent() }
        record(.urgent, system.name, urgentSeconds)
        answer[.urgent] = urgent.map(\.key).joined(separator: ",")
        (found, seconds) = try await timed {
          var counts: [String] = []
          for person in people { counts.append(String(try await system.assignedCount(person))) }
          return counts
        }
        record(.count, system.name, seconds / Double(calls))
        answer[.count] = found.joined(separator: ",")
        (found, seconds) = try await timed {
          var sums: [String] = []
          for (project, _) in pages.prefix(heavyCalls) {
            sums.append(String(try await system.openEstimate(project)))
          }
          return sums
        }
        record(.sum, system.name, seconds / Double(heavyCalls))
        answer[.sum] = found.joined(separator: ",")
        let (all, scanSeconds) = try await timed { try await system.scan() }
        record(.scan, system.name, scanSeconds)
        answer[.scan] = "\(all.count) \(all.first?.key ?? "") \(all.last?.key ?? "")"
        if repetition == 0 {
          let expected = tickets.sortedByBytes()
          guard all.count == expected.count,
            zip(all, expected).allSatisfy({ $0.isSame(as: $1, within: system.dateError) })
          else {
            throw BenchError(
              "\(system.name): a full scan did not give back the tickets inserted, in id order")
          }
        }
        let (_, closeSeconds) = try await timed { try await system.close(closing, at: closedAt) }
        record(.close, system.name, closeSeconds)
        let project = TicketWorkload.projects[repetition]
        let (deleted, deleteSeconds) = try await timed { try await system.deleteClosed(of: project) }
        record(.delete, system.name, deleteSeconds)
        answer[.delete] = String(deleted)
        for (operation, text) in answer { answers[operation, default: [:]][system.name] = text }
      }
      for (operation, bySystem) in answers where Set(bySystem.values).count > 1 {
        let names = bySystem.keys.sorted().joined(separator: ", ")
        throw BenchError("\(operation.rawValue): the systems (\(names)) gave different answers")
      }
      say("  repetition \(repetition + 1) of \(repetitions): every system gave the same answers")
    }
    for system in systems {
      try await system.close()
      sizes[system.name] = system.fileSize()
    }
    return table(rows: rows, systems: systems.map(\.name), times: times, sizes: sizes)
  }

  /// The medians and ratios of one size, as Markdown.
  static func table(
    rows: Int, systems: [String], times: [Operation: [String: [Double]]], sizes: [String: Int64]
  )
    -> [String]
  {
    func median(_ operation: Operation, _ system: String) -> Double? {
      guard let values = times[operation]?[system], !values.isEmpty else { return nil }
      return values.sorted()[values.count / 2]
    }
    func shown(_ seconds: Double?) -> String {
      guard let seconds else { return "—" }
      switch seconds {
      case ..<0.001: return String(format: "%.1f µs", seconds * 1e6)
      case ..<1: return String(format: "%.2f ms", seconds * 1e3)
      default: return String(format: "%.3f s", seconds)
      }
    }
    let present = pairs.filter { systems.contains($0.system) && systems.contains($0.baseline) }
    var lines = [
      "### \(rows.formatted()) tickets", "",
      "Ratios (below 1: the Coffer backend is faster); **bold** where the goal is not met:", "",
      "| operation | "
        + present.map { "\($0.system) ÷ \($0.baseline) (goal \(goalText($0)))" }
        .joined(separator: " | ") + " |",
      "|---|" + present.map { _ in "---:|" }.joined(),
    ]
    for operation in Operation.allCases {
      var cells: [String] = []
      for pair in present {
        guard let value = median(operation, pair.system), let base = median(operation, pair.baseline) else {
          cells.append("—")
          continue
        }
        let ratio = value / base
        let met = pair.strict ? ratio < pair.goal : ratio <= pair.goal
        let text = String(format: "%.2fx", ratio)
        cells.append(met ? text : "**\(text)**")
      }
      lines.append("| \(operation.rawValue) | " + cells.joined(separator: " | ") + " |")
    }
    lines += [
      "", "Medians:", "",
      "| operation | counted | " + systems.joined(separator: " | ") + " |",
      "|---|---|" + systems.map { _ in "---:|" }.joined(),
    ]
    for operation in Operation.allCases {
      lines.append(
        "| \(operation.rawValue) | \(operation.detail(rows: rows)) | "
          + systems.map { shown(median(operation, $0)) }.joined(separator: " | ") + " |")
    }
    lines.append(
      "| file size | on disk after close | "
        + systems.map { name in
          let bytes = sizes[name] ?? 0
          return bytes == 0 ? "—" : String(format: "%.1f MiB", Double(bytes) / 1_048_576)
        }.joined(separator: " | ") + " |")
    return lines + [""]
  }

  static func goalText(_ pair: Pair) -> String {
    pair.strict ? "< \(String(format: "%.2f", pair.goal))x" : "≤ \(String(format: "%.2f", pair.goal))x"
  }

  static func report(_ tables: [String], command: String, repetitions: Int, load: MachineLoad.Result)
    -> String
  {
    let header = [
      "## Second workload: tickets",
      "",
      "Written by `\(command)`; every figure below was printed by that run. The second workload, next to the "
        + "chat messages above: an issue tracker's tickets with UUID ids and UUID fields, optional "
        + "fields (one of them long text, on a third of the tickets), a unique index on `key`, an index on "
        + "(`projectID`, `status`) queried with a sort on `createdAt`, an index on `assignee`, a filter no "
        + "index covers, counts, sums, an update of two fields and a delete by filter. Each system does the "
        + "same calls in the same order, the systems taking turns within each of \(repetitions) repetitions; "
        + "figures are medians. Every answer of every system is compared, and the run stops at the first "
        + "difference. Raw C libsqlite3 uses the table layout Coffer's SQLite backend makes (`STRICT`, "
        + "`WITHOUT ROWID`, the same indexes) and updates only the two changed columns; raw C liblmdb keeps "
        + "each ticket in compact row bytes under its 16 id bytes and the same indexes in three more "
        + "databases (`key` → id; sorted duplicates for (`projectID`, `status`) → id and `assignee` → id), "
        + "reads single fields in place, and rewrites a closed ticket's row and moves its index entry; Coffer "
        + "writes the changed values back, as an app holding them does; GRDB uses `update(_:columns:)`; "
        + "Fluent SQLite (FluentKit with fluent-sqlite-driver, in WAL mode like the others) uses a `Model`, "
        + "the query builder (`filter`, `sort`, `range`, `count`, `sum`), `create` on arrays of models and "
        + "query-builder updates of the two fields, and stores UUIDs as text and dates as seconds. "
        + "\(load.sentence) Machine: \(machineDescription()).",
      "",
    ]
    return (header + tables).joined(separator: "\n")
  }
}

extension Ticket {
  /// Whether two tickets hold the same values, their dates at most `error` microseconds apart.
  func isSame(as other: Ticket, within error: Int64) -> Bool {
    func close(_ left: Date?, _ right: Date?) -> Bool {
      guard let left, let right else { return left == nil && right == nil }
      return abs(TicketWorkload.microseconds(left) - TicketWorkload.microseconds(right)) <= error
    }
    var (left, right) = (self, other)
    (left.createdAt, left.closedAt, right.createdAt, right.closedAt) = (.distantPast, nil, .distantPast, nil)
    return left == right && close(createdAt, other.createdAt) && close(closedAt, other.closedAt)
  }
}

extension Array where Element == Ticket {
  /// The tickets in the order of their ids' bytes: Coffer's order for UUIDs, and a blob's in SQLite.
  func sortedByBytes() -> [Ticket] {
    sorted { left, right in
      Swift.withUnsafeBytes(of: left.id.uuid) { a in
        Swift.withUnsafeBytes(of: right.id.uuid) { b in a.lexicographicallyPrecedes(b) }
      }
    }
  }
}
