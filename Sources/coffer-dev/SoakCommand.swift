import ArgumentParser
@_spi(Backend) import Coffer
import CofferChildProcess
import CofferSoak
import CofferStores
import Foundation

extension CofferDevCommand {
  /// `coffer-dev soak URL`: a bounded soak of one store. Writer tasks move random amounts between
  /// accounts in transactions while reader tasks read every account in one snapshot and check
  /// that the balances still sum to the seeded total — in this process and in extra processes
  /// (this executable again) on the same store. Prints throughput, resident memory and open
  /// files per window and a summary; exits non-zero on a violation, an error, a transfer that
  /// conflicted after every retry, or growth after the warm-up windows beyond the limit.
  ///
  /// `make soak` and `scripts/soak` run it on every durable backend.
  struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
      abstract:
        "Soak a store: concurrent transfers and checked snapshot reads, in several processes, for a while.",
      discussion: """
        Writes an entity SoakAccount into the store, which must not hold one with rows yet: point it \
        at a scratch store. Stores whose backend is not multi-process get no extra processes. \
        A transfer whose conflict outlasts every retry of Store.transaction is counted apart \
        ("exhausted") and fails the run like an error: the store's retries take turns, so under \
        this load none should, and one would mean an application saw its transaction fail.
        """)

    @Argument(help: ArgumentHelp("The store URL (a scratch store: the soak writes to it).", valueName: "URL"))
    var url: String

    @Option(help: "How long to run, in seconds.")
    var seconds = 60

    @Option(help: "Writer tasks per process.")
    var writers = 8

    @Option(help: "Reader tasks per process.")
    var readers = 4

    @Option(help: "Extra processes on the same store (none on a backend that is not multi-process).")
    var processes = 2

    @Option(help: "Seconds per reported window.")
    var window = 10

    @Option(
      name: .customLong("warm-up"),
      help: ArgumentHelp(
        "How many windows at the start are the warm-up: growth is measured from the highest level they reached.",
        valueName: "windows"))
    var warmUp = 1

    @Option(help: "How many accounts the transfers move amounts between.")
    var accounts = 100

    @Option(
      name: .customLong("growth-limit"),
      help: "How much anonymous resident memory or open files may grow after the warm-up, in percent.")
    var growthLimit = 5.0

    @Option(help: .hidden)
    var child: Int?

    @Option(name: .customLong("start-at"), help: .hidden)
    var startAt: Double?

    /// Each account's balance when seeded.
    static let seedBalance: Int64 = 1_000
    /// How long the parent gives extra processes to start before everyone begins.
    static let startDelay: Duration = .seconds(3)

    func validate() throws {
      guard seconds >= 1, window >= 1, window <= seconds else {
        throw ValidationError("--seconds and --window must be at least 1, and --window at most --seconds.")
      }
      guard writers >= 1, readers >= 1, processes >= 0, accounts >= 2, growthLimit >= 0 else {
        throw ValidationError(
          "--writers and --readers must be at least 1, --processes at least 0, --accounts at least 2, "
            + "--growth-limit at least 0.")
      }
      guard warmUp >= 1, warmUp < windowCount || windowCount == 1 else {
        throw ValidationError(
          "--warm-up must be at least 1 and leave a window after it: with --seconds \(seconds) and --window "
            + "\(window) there are \(windowCount) windows.")
      }
    }

    func run() async throws {
      if let child {
        try await runChild(number: child)
      } else {
        try await runParent()
      }
    }

    /// How many windows the soak has: the last one may be shorter.
    private var windowCount: Int { (seconds + window - 1) / window }

    /// The end of window `number` (from 1), in seconds from the start.
    private func windowEnd(_ number: Int) -> Int { min(number * window, seconds) }

    /// The soak itself: seeds, starts the extra processes, runs, reports.
    private func runParent() async throws {
      let store = try await Terminal.open(url, role: "store to soak")
      let shown = store.backend.name
      let capabilities = store.backend.capabilities
      let ledger = SoakLedger.seeded(accounts: accounts, balance: Self.seedBalance)
      do {
        guard capabilities.contains(.preconditions), store.backend is any SnapshotReading else {
          throw CofferError(
            .unsupported, "The soak needs transactions and snapshots, which this backend does not have.",
            store: shown)
        }
        try await seed(store, ledger)
      } catch {
        try? await store.close()
        throw Terminal.failure(error, while: "seeding the soak's accounts in '\(shown)'")
      }
      let extra = capabilities.contains(.multiProcess) ? processes : 0
      Terminal.say(
        "soak \(shown): \(writers) writers and \(readers) readers "
          + (extra > 0 ? "in each of \(extra + 1) processes, " : "in 1 process, ")
          + "\(accounts) accounts, \(seconds) s in windows of \(window) s "
          + (warmUp == 1 ? "(the first is the warm-up)" : "(the first \(warmUp) are the warm-up)"))
      if extra < processes {
        Terminal.say("note: \(type(of: store.backend)) is not multi-process, so no extra processes run")
      }

      let delay = extra > 0 ? Self.startDelay : .zero
      let startAt = Date().timeIntervalSince1970 + Double(delay.components.seconds)
      let start = ContinuousClock.now + delay
      var children: [SoakChild] = []
      do {
        for number in 0..<extra {
          children.append(
            try SoakChild(
              number: number + 1, executable: try executable(), arguments: childArguments(number + 1, startAt)
            ))
        }
      } catch {
        children.forEach { $0.kill() }
        try? await store.close()
        throw Terminal.failure(error, while: "starting the soak's extra processes")
      }
      let collecting = children.map { child in Task { await child.collect() } }

      let workload = SoakWorkload(
        store: store, ledger: ledger, writers: writers, readers: readers, speaker: "coffer-dev soak")
      let deadline = start + .seconds(seconds)
      async let work: Void = workload.run(from: start, until: deadline)
      var own: [(counts: SoakCounts, resources: SoakResources)] = []
      for number in 1...windowCount {
        let resources = await resources(in: number, from: start)
        own.append((workload.take(), resources))
        await awaitReports(of: number, from: children)
        Terminal.say(combined(number, own[number - 1], children).rendered)
      }
      await work
      var totals = workload.take()
      try? await store.close()

      var failures: [String] = []
      for (child, task) in zip(children, collecting) {
        let termination = await task.value
        let reports = child.reports.withLock { $0 }
        if termination != .exited(0) {
          failures.append("extra process \(child.number) ended with \(termination)")
        }
        if reports.unreadable > 0 {
          failures.append("extra process \(child.number) printed \(reports.unreadable) unreadable lines")
        }
        if reports.windows.count < windowCount {
          failures.append(
            "extra process \(child.number) reported \(reports.windows.count) of \(windowCount) windows")
        }
        if let end = reports.end { totals.add(end.counts) }
      }
      let windows = (1...windowCount).map { combined($0, own[$0 - 1], children) }
      for window in windows { totals.add(window.counts) }
      let summary = SoakSummary(
        windows: windows, warmUp: warmUp, totals: totals, growthLimit: growthLimit, processFailures: failures)
      for line in summary.rendered(store: shown) { Terminal.say(line) }
      if !summary.failures.isEmpty { throw ExitCode.failure }
    }

    /// Prepares the accounts' entity, refuses a store that already has accounts, and inserts
    /// them in one batch.
    private func seed(_ store: Store, _ ledger: SoakLedger) async throws {
      if try await store.query(SoakAccount.self).count() > 0 {
        throw CofferError(
          .notEmpty,
          "This store already holds \(SoakAccount.entityName) rows; the soak writes to its store, so give it a "
            + "new scratch store.", store: store.backend.name, entity: SoakAccount.entityName)
      }
      try await store.insert(
        (1...ledger.accounts).map { SoakAccount(id: Int64($0), balance: Self.seedBalance) })
    }

    /// The path of this executable, which the extra processes run.
    private func executable() throws -> String {
      guard let path = Bundle.main.executablePath else {
        throw CofferError(
          .unavailable, "The path of this executable is not known, so no extra process can start.")
      }
      return path
    }

    /// The arguments of extra process `number`.
    private func childArguments(_ number: Int, _ startAt: Double) -> [String] {
      [
        "soak", url, "--child", String(number), "--start-at", String(startAt), "--seconds", String(seconds),
        "--window", String(window), "--writers", String(writers), "--readers", String(readers),
        "--accounts", String(accounts),
      ]
    }

    /// Waits until every extra process has reported window `number` (or ended), at most a few
    /// seconds: a process that is late shows as missing in the window's line, and counts in
    /// the summary once it reports.
    private func awaitReports(of number: Int, from children: [SoakChild]) async {
      let patience = ContinuousClock.now + .seconds(min(window, 5))
      while ContinuousClock.now < patience {
        let waiting = children.contains { child in
          child.process.termination == nil
            && child.reports.withLock { $0.windows[number] == nil && $0.end == nil }
        }
        if !waiting { return }
        try? await Task.sleep(for: .milliseconds(50))
      }
    }

    /// This process's resources in window `number`: the lowest of the samples of its second half,
    /// so that the warm-up window's figures are those of a process that has opened what it
    /// keeps open, not of one that has just started.
    private func resources(in number: Int, from start: ContinuousClock.Instant) async -> SoakResources {
      let begin = start + .seconds(windowEnd(number - 1))
      let end = start + .seconds(windowEnd(number))
      return await SoakResources.lowest(from: begin + (end - begin) / 2, until: end)
    }

    /// Window `number` over this process's own figures and what the extra processes reported.
    private func combined(
      _ number: Int, _ own: (counts: SoakCounts, resources: SoakResources), _ children: [SoakChild]
    ) -> SoakWindow {
      var counts = own.counts
      var resources: [SoakResources?] = [own.resources]
      for child in children {
        let line = child.reports.withLock { $0.windows[number] }
        if let line { counts.add(line.counts) }
        resources.append(line?.resources)
      }
      return SoakWindow(
        number: number, start: Double(windowEnd(number - 1)), end: Double(windowEnd(number)), counts: counts,
        resources: resources)
    }

    /// An extra process: the same workload on the same store, from the same moment, printing
    /// one ``SoakChildLine`` per window and one at the end for the parent.
    private func runChild(number: Int) async throws {
      let speaker = "coffer-dev soak, extra process \(number)"
      let store: Store
      do {
        store = try await Store.open(url: url)
      } catch {
        throw Terminal.failure(error, while: "\(speaker): opening '\(Terminal.redacted(url))'")
      }
      let wait = max(0, (startAt ?? 0) - Date().timeIntervalSince1970)
      let start = ContinuousClock.now + .milliseconds(Int(wait * 1_000))
      let workload = SoakWorkload(
        store: store, ledger: .seeded(accounts: accounts, balance: Self.seedBalance), writers: writers,
        readers: readers, speaker: speaker)
      async let work: Void = workload.run(from: start, until: start + .seconds(seconds))
      for number in 1...windowCount {
        let resources = await resources(in: number, from: start)
        report(SoakChildLine(window: number, counts: workload.take(), resources: resources))
      }
      await work
      report(SoakChildLine(window: nil, counts: workload.take(), resources: SoakResources()))
      try? await store.close()
    }

    /// Writes a line for the parent at once (standard output is a pipe: `print` would hold it).
    private func report(_ line: SoakChildLine) {
      FileHandle.standardOutput.write(Data((line.encoded + "\n").utf8))
    }
  }
}
