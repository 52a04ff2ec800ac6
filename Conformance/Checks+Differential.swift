@_spi(Backend) import Coffer
import Foundation

/// The seed of the randomized differential check: `COFFER_CONFORMANCE_SEED` (decimal or 0x-hex)
/// when set, a fixed default otherwise.
func differentialSeed() -> UInt64 {
  seed(from: ProcessInfo.processInfo.environment["COFFER_CONFORMANCE_SEED"]) ?? 0xC0FFEE
}

private func seed(from text: String?) -> UInt64? {
  guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
  if text.lowercased().hasPrefix("0x") { return UInt64(text.dropFirst(2), radix: 16) }
  return UInt64(text)
}

/// How much a differential run does: sequences of random steps, one seed each, counting up from
/// ``firstSeed``, until ``sequences`` have run or ``seconds`` have passed.
public struct DifferentialBudget: Sendable, Hashable {
  /// The seed of the first sequence; sequence *n* has seed `firstSeed + n`.
  public var firstSeed: UInt64
  /// The most sequences to run, if limited.
  public var sequences: Int?
  /// The most seconds to run for (a sequence started is finished), if limited.
  public var seconds: Double?
  /// The random steps in each sequence (besides the first prepare and the final reads).
  public var steps: Int
  /// Kinds of step left out, to look past a known defect (``DifferentialBudget/stepKinds``).
  public var excluded: Set<String>

  /// The kinds of step a run can leave out.
  public static let stepKinds: Set<String> = DifferentialFeatures.all

  /// A budget.
  public init(
    firstSeed: UInt64, sequences: Int? = nil, seconds: Double? = nil, steps: Int = 150,
    excluded: Set<String> = []
  ) {
    self.firstSeed = firstSeed
    self.sequences = sequences
    self.seconds = seconds
    self.steps = steps
    self.excluded = excluded
  }

  /// A budget from the environment: `COFFER_CONFORMANCE_SEED` (else `defaultSeed`),
  /// `COFFER_DIFFERENTIAL_SEQUENCES`, `COFFER_DIFFERENTIAL_SECONDS`, `COFFER_DIFFERENTIAL_STEPS`
  /// and `COFFER_DIFFERENTIAL_EXCLUDE` (comma-separated step kinds); when neither sequences nor
  /// seconds are set, `defaultSequences`.
  public static func fromEnvironment(defaultSeed: UInt64, defaultSequences: Int, defaultSteps: Int = 150)
    -> Self
  {
    let environment = ProcessInfo.processInfo.environment
    let sequences = environment["COFFER_DIFFERENTIAL_SEQUENCES"].flatMap { Int($0) }
    let seconds = environment["COFFER_DIFFERENTIAL_SECONDS"].flatMap { Double($0) }
    return DifferentialBudget(
      firstSeed: seed(from: environment["COFFER_CONFORMANCE_SEED"]) ?? defaultSeed,
      sequences: sequences ?? (seconds == nil ? defaultSequences : nil), seconds: seconds,
      steps: environment["COFFER_DIFFERENTIAL_STEPS"].flatMap { Int($0) } ?? defaultSteps,
      excluded: DifferentialFeatures.excludedByEnvironment())
  }
}

/// One disagreement a differential run found: a backend and the reference (and perhaps other
/// backends) answered a step differently.
public struct DifferentialFinding: Sendable {
  /// The backend's URL.
  public let target: String
  /// The sequence's seed: `COFFER_CONFORMANCE_SEED=seed` replays it first.
  public let seed: UInt64
  /// A short name for the kind of disagreement, e.g. `fetch: backend rows`.
  public let kind: String
  /// The steps (shrunk when possible) and what differed.
  public let report: String
}

/// What a differential run did and found.
public struct DifferentialReport: Sendable {
  /// The seeds of the sequences run, in order.
  public var seeds: [UInt64] = []
  /// The steps each backend ran, by URL, in the order of the targets.
  public var steps: [(target: String, steps: Int)] = []
  /// Every disagreement, in the order found.
  public var findings: [DifferentialFinding] = []
  /// The step kinds left out.
  public var excluded: Set<String> = []

  /// One line: sequences, seeds, steps per backend, disagreements by backend and kind.
  public var summary: String {
    let range =
      seeds.isEmpty ? "none" : seeds.count == 1 ? "\(seeds[0])" : "\(seeds[0])…\(seeds[seeds.count - 1])"
    var kinds: [String: Int] = [:]
    for finding in findings { kinds["\(finding.target) \(finding.kind)", default: 0] += 1 }
    let found =
      kinds.isEmpty
      ? "no disagreements"
      : "\(findings.count) disagreements: "
        + kinds.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: "; ")
    return "differential: \(seeds.count) sequences (seeds \(range)); steps "
      + steps.map { "\($0.target) \($0.steps)" }.joined(separator: ", ")
      + (excluded.isEmpty ? "" : "; excluded \(excluded.sorted().joined(separator: ","))") + "; \(found)"
  }
}

extension ConformanceSuite {
  static let differentialChecks: [ConformanceCheck] = [
    ConformanceCheck(
      "differential.random-batches",
      "Random schemas with hostile names, hostile values, batches (some failing), bulk inserts, queries, reopening, schema evolutions and prepares racing batches give exactly the results and errors (code, entity, id, field) of the reference semantics."
    ) { context in
      let budget = DifferentialBudget.fromEnvironment(
        defaultSeed: differentialSeed(), defaultSequences: 3, defaultSteps: 120)
      let features = DifferentialFeatures.allowed(by: context.target.capabilities, excluding: budget.excluded)
      FileHandle.standardError.write(
        Data(
          "differential.random-batches on \(context.target.name): seed \(budget.firstSeed) (set COFFER_CONFORMANCE_SEED to change)\n"
            .utf8))
      var sequence = 0
      let clock = ContinuousClock()
      let start = clock.now
      while budget.sequences.map({ sequence < $0 }) ?? true,
        budget.seconds.map({ clock.now - start < .seconds($0) }) ?? true
      {
        let seed = budget.firstSeed &+ UInt64(sequence)
        sequence += 1
        var generator = DifferentialGenerator(seed: seed, features: features)
        let steps = generator.sequence(steps: budget.steps)
        guard let first = try await DifferentialRunner.firstDisagreement(steps, context: context) else {
          if let leak = DifferentialValues.leak(in: context.log) {
            throw CheckFailure("In the sequence of seed \(seed), a log line shows a stored value: \(leak)")
          }
          continue
        }
        throw CheckFailure(try await explain(first, steps, seed: seed, context: context))
      }
    }
  ]

  /// The shrunk sequence and the disagreement, as a failure message.
  static func explain(
    _ first: DifferentialDisagreement, _ steps: [DifferentialStep], seed: UInt64, context: CheckContext,
    shrink: Bool = true
  ) async throws -> String {
    let prefix = Array(steps[...first.index])
    var shortest = prefix
    var final = first
    if shrink {
      let shrunk = try await DifferentialRunner.shrink(steps, failingAt: first, context: context)
      if let again = try await DifferentialRunner.firstDisagreement(shrunk, context: context),
        again.kind == first.kind
      {
        shortest = shrunk
        final = again
      }
    }
    var text = """
      \(context.target.name) and the reference disagree at step \(final.index + 1) of this sequence (seed \(seed); \
      replay with COFFER_CONFORMANCE_SEED=\(seed)); \(shortest.count < prefix.count ? "shrunk" : "not shrunk") from \(prefix.count) steps to \(shortest.count):
      \(DifferentialRunner.listing(shortest))
      At step \(final.index + 1): \(final.message)
      """
    if shortest.count < prefix.count && first.message.contains("\nOther backends:") {
      text += "\nIn the whole sequence, at step \(first.index + 1): \(first.message)"
    }
    return text
  }

  /// Runs random sequences on several backends side by side: every step on each, each compared
  /// with a reference of its own and with the others. Prints each sequence's seed and each
  /// disagreement (shrunk, for the first few of each kind) through `log`.
  ///
  /// Features a target does not declare are left out for all: targets that are not
  /// `reopenable` are the only exception (reopening is nothing for them).
  public static func runDifferential(
    on targets: [ConformanceTarget], budget: DifferentialBudget, log: @Sendable (String) -> Void = { _ in }
  ) async -> DifferentialReport {
    var shared = targets.reduce(CheckRequirements(rawValue: ~0)) { $0.intersection($1.capabilities) }
    if targets.contains(where: { $0.capabilities.contains(.reopenable) }) { shared.insert(.reopenable) }
    let features = DifferentialFeatures.allowed(by: shared, excluding: budget.excluded)
    var report = DifferentialReport()
    report.excluded = budget.excluded
    report.steps = targets.map { ($0.name, 0) }
    var shrunk: [String: Int] = [:]
    let clock = ContinuousClock()
    let start = clock.now
    while budget.sequences.map({ report.seeds.count < $0 }) ?? true,
      budget.seconds.map({ clock.now - start < .seconds($0) }) ?? true
    {
      let seed = budget.firstSeed &+ UInt64(report.seeds.count)
      report.seeds.append(seed)
      var generator = DifferentialGenerator(seed: seed, features: features)
      let steps = generator.sequence(steps: budget.steps)
      let contexts = targets.map { target in
        CheckContext(
          target: target, checkID: "differential",
          directory: (target.directory as NSString).appendingPathComponent(
            "differential-\(seed)-\(UUID().uuidString.prefix(8))"))
      }
      log("starting seed \(seed)")
      var line = "seed \(seed): \(steps.count) steps"
      do {
        for context in contexts {
          try FileManager.default.createDirectory(
            atPath: context.directory, withIntermediateDirectories: true)
        }
        let results = try await DifferentialRunner.run(steps, contexts: contexts)
        log(
          "done seed \(seed) steps "
            + zip(targets, results).map { "\($0.name)=\($1.steps)" }.joined(separator: " ")
            + " disagreements \(results.filter { $0.disagreement != nil }.count)")
        for (position, context) in contexts.enumerated() {
          guard let leak = DifferentialValues.leak(in: context.log) else { continue }
          report.findings.append(
            DifferentialFinding(
              target: targets[position].name, seed: seed, kind: "log shows a stored value", report: leak))
          line += "\n  DISAGREEMENT on \(targets[position].name) [log shows a stored value]: \(leak)"
        }
        for (position, result) in results.enumerated() {
          report.steps[position].steps += result.steps
          guard let disagreement = result.disagreement else { continue }
          let key = "\(targets[position].name) \(disagreement.kind)"
          shrunk[key, default: 0] += 1
          let text = try await explain(
            disagreement, steps, seed: seed, context: contexts[position], shrink: (shrunk[key] ?? 0) <= 3)
          report.findings.append(
            DifferentialFinding(
              target: targets[position].name, seed: seed, kind: disagreement.kind, report: text))
          line += "\n  DISAGREEMENT on \(targets[position].name) [\(disagreement.kind)]:\n" + text
        }
      } catch {
        line += "\n  the run itself failed: \(error)"
        report.findings.append(
          DifferentialFinding(target: "all", seed: seed, kind: "run failed", report: "\(error)"))
      }
      log(line)
      for context in contexts {
        await context.closeAll()
        try? FileManager.default.removeItem(atPath: context.directory)
      }
    }
    return report
  }
}
