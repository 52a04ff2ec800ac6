import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A durable backend the explorer runs, and the store URL it uses under a directory.
struct ExploredBackend {
  /// The name in the report and in `--backends`.
  var name: String
  /// The store URL with `{root}` for the directory the store lives in.
  var template: String
  /// Whether the writer applies each row of a commit as a batch of its own (a negative control:
  /// a crash between them must show half a batch).
  var splitsBatches = false

  /// Plist (binary and XML), SQLite with its default `synchronous=full`, LMDB.
  static let all = [
    ExploredBackend(name: "plist-binary", template: "plist://{root}/store.plist?format=binary"),
    ExploredBackend(name: "plist-xml", template: "plist://{root}/store.plist?format=xml"),
    ExploredBackend(name: "sqlite", template: "sqlite://{root}/store.sqlite"),
    ExploredBackend(name: "lmdb", template: "lmdb://{root}/store"),
  ]

  /// Negative controls, which must fail, proving the explorer can see what it looks for:
  /// SQLite that never syncs (`synchronous=off`) loses acknowledged commits, and a writer that
  /// applies a commit's rows one batch at a time leaves half batches.
  static let controls = [
    ExploredBackend(
      name: "control-sqlite-unsynced", template: "sqlite://{root}/store.sqlite?synchronous=off"),
    ExploredBackend(
      name: "control-split-batches", template: "sqlite://{root}/store.sqlite", splitsBatches: true),
  ]

  /// The backend or control of this name, if any.
  static func named(_ name: String) -> ExploredBackend? {
    (all + controls).first { $0.name == name }
  }
}

/// The explorer's settings (see `crash-states --help`).
struct ExplorerSettings {
  /// The shim to preload into the writer.
  var shim = ""
  /// Commits the writer makes.
  var commits = 50
  /// The seed every random choice comes from.
  var seed: UInt64 = 1
  /// Rounds of random states per crash point.
  var variants = 2
  /// Backends to run, by name.
  var backends = ExploredBackend.all.map(\.name)
  /// Seconds a checker may take over one state before it counts as a hang.
  var timeout = 30.0
  /// States per checker process.
  var batchSize = 40
  /// A directory to copy failing states to, or `nil`.
  var keep: String?
  /// Whether a file's sync also makes earlier name changes durable (`--names journaled`), rather
  /// than only its directory's sync (`--names posix`, the default).
  var namesDurableOnFileSync = false
}

/// The counts for one backend.
struct BackendReport {
  /// The backend's name.
  var name: String
  /// Records in the writer's trace, and how many were writes and syncs.
  var records = 0
  var writes = 0
  var syncs = 0
  /// Crash points (moments between two changes, syncs or acknowledgements).
  var crashPoints = 0
  /// States generated, and how many of them were different (each opened once).
  var generated = 0
  var distinct = 0
  /// Generated states by what opening them gave.
  var opened = 0
  var typedErrors: [String: Int] = [:]
  var crashes = 0
  var hangs = 0
  var untyped = 0
  /// States missing a commit acknowledged before their crash point: opened without it, or
  /// refusing to open (a typed error) although a commit had been acknowledged.
  var lostAcknowledged = 0
  /// Of those, the ones that refused to open.
  var unreadableAfterAcknowledgement = 0
  /// States showing half a batch, a gap, a wrong row or a counter that disagrees with the rows.
  var halfBatches = 0
  /// States that showed a commit the writer had not acknowledged yet (allowed: it was durable
  /// before `apply` returned).
  var aheadOfAcknowledgement = 0
  /// The highest commit acknowledged in the trace.
  var acknowledged: Int64 = 0
  /// A few failing states, described.
  var examples: [String] = []
  /// The first state that gave each typed error, described (these pass: nothing had been
  /// acknowledged yet).
  var typedErrorExamples: [String: String] = [:]

  /// Whether any check failed.
  var failed: Bool { crashes + hangs + untyped + lostAcknowledged + halfBatches > 0 }

  /// The report's lines.
  var lines: [String] {
    let errors =
      typedErrors.isEmpty
      ? "0"
      : "\(typedErrors.values.reduce(0, +)) ("
        + typedErrors.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        .joined(separator: ", ") + ")"
    var lines = [
      "\(name): \(failed ? "FAILED" : "ok")",
      "  trace: \(records) records (\(writes) writes, \(syncs) syncs), \(acknowledged) commits acknowledged",
      "  crash points \(crashPoints), states generated \(generated) (\(distinct) distinct, each opened once)",
      "  opened \(opened), typed errors \(errors), crashes \(crashes), hangs \(hangs), untyped errors \(untyped)",
      "  lost acknowledged commits \(lostAcknowledged) (unreadable after an acknowledgement \(unreadableAfterAcknowledgement)), "
        + "half batches \(halfBatches), ahead of acknowledgement \(aheadOfAcknowledgement)",
    ]
    lines += typedErrorExamples.sorted { $0.key < $1.key }.map { "  first \($0.key): \($0.value)" }
    lines += examples.map { "  failure: \($0)" }
    return lines
  }
}

/// Runs the writer under the shim for each backend, checks the trace against the real files,
/// builds the crash states and opens each.
struct Explorer {
  /// The settings.
  var settings: ExplorerSettings

  /// Explores every chosen backend; returns whether all passed.
  func run() throws -> Bool {
    let executable = try ChildProcess.ownExecutable()
    guard FileManager.default.fileExists(atPath: settings.shim) else {
      throw ExplorerFailure("no shim at '\(settings.shim)': build it with scripts/crash-states")
    }
    let work = NSTemporaryDirectory() + "coffer-crash-states-\(getpid())"
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: work) }
    print(
      "crash-states: \(settings.commits) commits of \(Workload.rowsPerCommit) inserts + a counter update each, "
        + "seed \(settings.seed), \(settings.variants) rounds of random states per crash point, names durable "
        + (settings.namesDurableOnFileSync
          ? "at any fsync (journaled)" : "only at their directory's fsync (posix)"))
    var passed = true
    for name in settings.backends {
      guard let backend = ExploredBackend.named(name) else {
        throw ExplorerFailure(
          "unknown backend '\(name)'; known: \((ExploredBackend.all + ExploredBackend.controls).map(\.name))")
      }
      let started = Date()
      let report = try explore(backend, executable: executable, work: work + "/" + name)
      for line in report.lines { print(line) }
      print("  (\(Int(Date().timeIntervalSince(started))) s)")
      if report.failed { passed = false }
    }
    print("crash-states: \(passed ? "every check held" : "FAILED")")
    return passed
  }

  private func explore(_ backend: ExploredBackend, executable: String, work: String) throws -> BackendReport {
    let root = work + "/root"
    let trace = work + "/trace"
    try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    guard let resolved = realpath(root, nil) else { throw ExplorerFailure("cannot resolve \(root)") }
    let resolvedRoot = String(cString: resolved)
    free(resolved)
    let url = backend.template.replacingOccurrences(of: "{root}", with: resolvedRoot)

    let writer = try ChildProcess(
      [executable, "write", url, String(settings.commits)] + (backend.splitsBatches ? ["split"] : []),
      extraEnvironment: [
        "LD_PRELOAD": settings.shim, "CRASH_TRACE_ROOT": resolvedRoot, "CRASH_TRACE_FILE": trace,
      ],
      errorLog: work + "/writer-errors")
    var line = writer.readLine(timeout: 600)
    while case .text = line { line = writer.readLine(timeout: 600) }
    if case .timedOut = line { writer.kill() }
    let ending = writer.wait()
    guard ending == .exited(0) else {
      let log = (try? String(contentsOfFile: work + "/writer-errors", encoding: .utf8)) ?? ""
      throw ExplorerFailure(
        "\(backend.name): the writer ended with \(ending.description): \(log.suffix(600))")
    }

    let records = try TraceRecord.read(trace)
    var report = BackendReport(name: backend.name)
    report.records = records.count
    report.writes = records.filter { $0.kind == .write || $0.kind == .truncate }.count
    report.syncs = records.filter { $0.kind == .sync || $0.kind == .syncAll }.count

    // The self-check first: a trace that does not rebuild the real files proves nothing.
    var replay = TraceReplay(root: resolvedRoot)
    for (index, record) in records.enumerated() { try replay.replay(record, index: index) { _ in } }
    guard replay.unhandled.isEmpty else {
      throw ExplorerFailure("\(backend.name): the shim saw calls it cannot model: \(replay.unhandled)")
    }
    try replay.check(against: resolvedRoot)
    report.acknowledged = replay.acknowledged
    guard report.acknowledged == Int64(settings.commits) else {
      throw ExplorerFailure(
        "\(backend.name): the trace acknowledges \(report.acknowledged) commits, not \(settings.commits)")
    }

    let states = work + "/states"
    try FileManager.default.createDirectory(atPath: states, withIntermediateDirectories: true)
    let checker = StateChecker(
      executable: executable, template: backend.template, directory: states, timeout: settings.timeout,
      batchSize: settings.batchSize, keep: settings.keep.map { $0 + "/" + backend.name })
    var random = SeededGenerator(seed: settings.seed)
    var generated: [(digest: StateDigest, acknowledged: Int64, label: String)] = []
    var seen: Set<StateDigest> = []
    var sampling = TraceReplay(root: resolvedRoot, namesDurableOnFileSync: settings.namesDurableOnFileSync)
    for (index, record) in records.enumerated() {
      try sampling.replay(record, index: index) { point in
        report.crashPoints += 1
        for state in CrashStateGenerator.states(at: point, variants: settings.variants, random: &random) {
          let digest = state.image.digest
          let label =
            "record \(point.record) (\(record.kind)), \(point.pending.count) pending, \(state.strategy), "
            + "acknowledged \(point.acknowledged)"
          generated.append((digest, point.acknowledged, label))
          if seen.insert(digest).inserted { try checker.enqueue(digest, state.image, label: label) }
        }
      }
    }
    try checker.flush()
    report.generated = generated.count
    report.distinct = seen.count

    for state in generated {
      guard let outcome = checker.outcomes[state.digest] else {
        throw ExplorerFailure("a state has no outcome")
      }
      var failure: String?
      switch outcome {
      case .opened(let contents):
        report.opened += 1
        if let present = contents.wholePrefix {
          if present < state.acknowledged {
            report.lostAcknowledged += 1
            failure = "lost acknowledged commits: shows 1…\(present)"
          } else if present > state.acknowledged {
            report.aheadOfAcknowledgement += 1
          }
        } else {
          report.halfBatches += 1
          failure =
            "half a batch: complete \(contents.complete), partial \(contents.partial), corrupt rows \(contents.corrupt), "
            + "counter \(contents.counter.map(String.init) ?? "none")"
        }
      case .typedError(let code, let message):
        report.typedErrors[code, default: 0] += 1
        if report.typedErrorExamples[code] == nil {
          report.typedErrorExamples[code] = "\(state.label): \(message.prefix(160))"
        }
        if state.acknowledged > 0 {
          report.lostAcknowledged += 1
          report.unreadableAfterAcknowledgement += 1
          failure = "unreadable after an acknowledged commit: \(code): \(message)"
        }
      case .untyped(let text):
        report.untyped += 1
        failure = "untyped error: \(text)"
      case .crashed(let text):
        report.crashes += 1
        failure = "crash: \(text)"
      case .hang:
        report.hangs += 1
        failure = "hang (no answer in \(Int(settings.timeout)) s)"
      }
      if let failure, report.examples.count < 8 { report.examples.append("\(state.label): \(failure)") }
    }
    return report
  }
}
