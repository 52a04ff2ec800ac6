@_spi(Backend) import Coffer
import CofferChildProcess
import Foundation
import Logging

/// A row the multi-process checks commit from two processes at once.
struct ProcessRecord: Storable, Equatable {
  var id: Int64
  var writer: String
  var step: Int64
}

/// Thrown by a check that cannot run in this setting; the suite reports it as skipped, with
/// the reason, never as passed.
struct CheckSkipped: Error {
  let reason: String
  init(_ reason: String) { self.reason = reason }
}

extension ConformanceSuite {
  /// How many single-row commits each process makes in the multi-process checks.
  static let processCommits = 150
  /// The first id the child process writes (the parent writes from 0).
  static let childFirstID: Int64 = 1_000_000

  /// The child side of the multi-process checks: opens `URL` with `registry` and commits
  /// `COUNT` rows one at a time, ids `FIRST`, `FIRST + 1`, … — or, when `FIRST` is `transfer`,
  /// makes `COUNT` transfers between the accounts of `multiprocess.transfer-invariant`; when it
  /// is `migrate`, runs the plan of `migration.killed-process-leaves-steps-whole`; when it is
  /// `readers-beside-writer`, runs the readers and the writer of
  /// `concurrency.writer-progresses-while-readers-read` with `COUNT` writes. A
  /// program named in ``ConformanceTarget/ChildProgram`` calls this with its last three arguments.
  ///
  /// The store logs to `logger` when one is given (`coffer conformance-child --log-level`).
  ///
  /// - Throws: ``Coffer/CofferError/Code/invalidConfiguration`` for arguments that are not
  ///   `URL FIRST COUNT`, or whatever opening and writing the store throws.
  public static func runChild(arguments: [String], registry: BackendRegistry, logger: Logger? = nil)
    async throws
  {
    if arguments.count == 3, arguments[1] == readersBesideWriter, let writes = Int(arguments[2]), writes > 0 {
      // The child side of concurrency.writer-progresses-while-readers-read.
      try await runReadersBesideWriter(url: arguments[0], registry: registry, writes: writes, logger: logger)
      return
    }
    if arguments.count == 3, arguments[1] == "evolve", let count = Int(arguments[2]), count >= 0 {
      // The child side of multiprocess.schema-evolution-beside-writer.
      try await runEvolvingChild(url: arguments[0], registry: registry, count: count, logger: logger)
      return
    }
    if arguments.count == 3, arguments[1] == "migrate" {
      // The child side of migration.killed-process-leaves-steps-whole.
      try await runMigrationChild(url: arguments[0], registry: registry, logger: logger)
      return
    }
    if arguments.count == 3, arguments[1] == "transfer", let count = Int(arguments[2]), count >= 0 {
      // The child side of multiprocess.transfer-invariant.
      let store = Store(backend: try await registry.open(arguments[0], logger: logger))
      var random = SplitMix64(seed: 99)
      for _ in 0..<count { try await transfer(in: store, accounts: processAccounts, random: &random) }
      try await store.close()
      return
    }
    guard arguments.count == 3, let first = Int64(arguments[1]), let count = Int(arguments[2]), count >= 0
    else {
      throw CofferError(
        .invalidConfiguration,
        "The conformance child takes three arguments, URL FIRST COUNT; got \(arguments.count): \(arguments).")
    }
    let store = Store(backend: try await registry.open(arguments[0], logger: logger))
    for step in 0..<count {
      try await store.insert(ProcessRecord(id: first + Int64(step), writer: "child", step: Int64(step)))
    }
    try await store.close()
  }

  static let multiProcessChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "multiprocess.concurrent-writers-lose-nothing", requires: .multiProcess,
      "A second process committing to the same store while this one commits and reads loses nothing: "
        + "every row of both is there afterwards, and after reopening."
    ) { context in
      let child = try childProgram(of: context)
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-shared")
      var store = Store(backend: try await context.target.open(url))
      do {
        try await store.prepare([ProcessRecord.self])
        let process = try startChild(
          child, [url.description, String(childFirstID), String(processCommits)],
          log: context.directory + "/child.log")
        do {
          try await writeBesideChild(store, process, log: context.directory + "/child.log")
        } catch {
          process.kill()
          _ = await process.waitUntilExit()
          throw error
        }
        try await expectAllRows(in: store, "after both processes finished")
        try await store.close()
        store = Store(backend: try await context.target.open(url))
        try await expectAllRows(in: store, "after reopening")
        try await store.close()
        await context.target.removeScratch(url)
      } catch {
        try? await store.close()
        await context.target.removeScratch(url)
        throw error
      }
    },
    ConformanceCheck(
      "multiprocess.transfer-invariant", requires: [.multiProcess, .preconditions, .snapshots],
      "A second process moving amounts between accounts with transactions while this one does too "
        + "never changes the total any snapshot sums to, and loses no transfer."
    ) { context in
      let child = try childProgram(of: context)
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-shared")
      let log = context.directory + "/child.log"
      let store = Store(backend: try await context.target.open(url))
      let total = Int64(processAccounts) * 100
      do {
        try await store.insert(
          (1...processAccounts).map {
            Item(id: Int64($0), name: "account", rank: 100, score: nil, flag: true)
          })
        let process = try startChild(
          child, [url.description, "transfer", String(processTransfers)], log: log)
        do {
          var random = SplitMix64(seed: 7)
          for _ in 0..<processTransfers {
            try await transfer(in: store, accounts: processAccounts, random: &random)
            let sum = try await store.snapshot { snapshot in
              try await snapshot.query(Item.self).fetch().reduce(Int64(0)) { $0 + ($1.rank ?? 0) }
            }
            try expectEqual(sum, total, "the sum of all balances in a snapshot while both processes transfer")
          }
          try await waitForChild(process, log: log)
        } catch {
          process.kill()
          _ = await process.waitUntilExit()
          throw error
        }
        let final = try await store.all(Item.self)
        try expectEqual(final.count, processAccounts, "accounts after both processes finished")
        try expectEqual(final.reduce(Int64(0)) { $0 + ($1.rank ?? 0) }, total, "the sum after both processes")
        try await store.close()
        await context.target.removeScratch(url)
      } catch {
        try? await store.close()
        await context.target.removeScratch(url)
        throw error
      }
    },
    ConformanceCheck(
      "multiprocess.observer-sees-other-process", requires: [.multiProcess, .observesOtherHandles],
      "A query observed in this process sees the commits another process makes to the same store, "
        + "one row at a time faster than the observer reads, up to the last of them."
    ) { context in
      let child = try childProgram(of: context)
      let url = context.target.scratchURL(in: context.directory, name: "\(context.checkID)-shared")
      let log = context.directory + "/child.log"
      let store = Store(backend: try await context.target.open(url))
      let seen = LockedState<[ProcessRecord]?>(nil)
      let reader = Task {
        for try await records in store.query(ProcessRecord.self).observe() { seen.withLock { $0 = records } }
      }
      do {
        try await store.prepare([ProcessRecord.self])
        try await waitFor("the first, empty result", { seen.withLock { $0 } == [] })
        let process = try startChild(
          child, [url.description, String(childFirstID), String(processCommits)], log: log)
        try await waitForChild(process, log: log)
        let expected = (0..<Int64(processCommits)).map {
          ProcessRecord(id: childFirstID + $0, writer: "child", step: $0)
        }
        try await waitFor(
          "the last of \(processCommits) rows another process committed", { seen.withLock { $0 } == expected }
        )
        reader.cancel()
        try await store.close()
        await context.target.removeScratch(url)
      } catch {
        reader.cancel()
        try? await store.close()
        await context.target.removeScratch(url)
        throw error
      }
    },
  ]

  /// How many accounts the multi-process transfer check moves amounts between, and how many
  /// transfers each process makes.
  static let processAccounts = 20
  static let processTransfers = 100

  /// The target's child program, or the reason the check is skipped without one; `role` says
  /// what the child is for.
  static func childProgram(
    of context: CheckContext, as role: String = "the second process"
  ) throws -> ConformanceTarget.ChildProgram {
    guard let child = context.target.child else {
      throw CheckSkipped(
        "no child program to run as \(role); give ConformanceTarget a child "
          + "(ConformanceTarget.ChildProgram.coffer(at: path of the coffer executable))")
    }
    guard FileManager.default.isExecutableFile(atPath: child.executable) else {
      throw CheckSkipped("the child program \(child.executable) is missing or not executable; build it first")
    }
    return child
  }

  /// Starts the child program with `arguments` after its own, its output going to `log`.
  static func startChild(
    _ child: ConformanceTarget.ChildProgram, _ arguments: [String], log: String
  ) throws -> ChildProcess {
    guard FileManager.default.createFile(atPath: log, contents: nil) else {
      throw CheckFailure("Could not create the child's log file \(log).")
    }
    return try ChildProcess(
      child.executable, child.arguments + arguments, standardOutput: .file(log),
      standardError: .standardOutput)
  }

  /// Waits for the child's first commit, then commits this process's rows one by one, checking
  /// as it goes that rows the child committed never disappear; then waits for the child.
  private static func writeBesideChild(_ store: Store, _ process: ChildProcess, log: String) async throws {
    let fromChild = FieldRef("writer") == "child"
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(60)
    while try await store.query(ProcessRecord.self).filter(fromChild).count() == 0, process.termination == nil
    {
      guard clock.now < deadline else { throw CheckFailure("The child process made no commit in 60 s.") }
      try await Task.sleep(for: .milliseconds(5))
    }
    var seen = 0
    for step in 0..<processCommits {
      try await store.insert(ProcessRecord(id: Int64(step), writer: "parent", step: Int64(step)))
      let childRows = try await store.query(ProcessRecord.self).filter(fromChild).count()
      try expect(
        childRows >= seen && childRows <= processCommits,
        "rows committed by the child went from \(seen) to \(childRows) (of \(processCommits))")
      seen = childRows
    }
    while process.termination == nil {
      guard clock.now < deadline else {
        throw CheckFailure("The child process was still running after 60 s; it wrote \(seen) rows.")
      }
      try await Task.sleep(for: .milliseconds(10))
    }
    try await waitForChild(process, log: log)
  }

  /// Waits for the child to end; throws with what it printed unless it exited with 0.
  static func waitForChild(_ process: ChildProcess, log: String) async throws {
    let termination = await process.waitUntilExit()
    guard termination == .exited(0) else {
      let printed = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
      throw CheckFailure("The child process failed with \(termination): \(show(printed))")
    }
  }

  private static func expectAllRows(in store: Store, _ when: String) async throws {
    let rows = try await store.all(ProcessRecord.self)
    let expected =
      (0..<processCommits).map { ProcessRecord(id: Int64($0), writer: "parent", step: Int64($0)) }
      + (0..<processCommits).map {
        ProcessRecord(id: childFirstID + Int64($0), writer: "child", step: Int64($0))
      }
    try expect(
      rows == expected,
      "rows \(when): expected \(processCommits) from each process, got \(rows.filter { $0.writer == "parent" }.count) "
        + "from this one and \(rows.filter { $0.writer == "child" }.count) from the child")
  }
}
